import { describe, expect, it } from 'vitest';
import { ERROR_CODES, NO_PERMISSION_PREFIX } from '../../../../server/src/platform/error-codes';
import { de } from '../../i18n/de';
import { en } from '../../i18n/en';
import { errorMessage, serverErrorText } from './error-text';

/** Every leaf as `path → text`; a non-text leaf is reported as such. */
function leaves(value: unknown, path = ''): Map<string, unknown> {
  const found = new Map<string, unknown>();
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    for (const [key, child] of Object.entries(value)) {
      for (const [p, leaf] of leaves(child, path ? `${path}.${key}` : key)) found.set(p, leaf);
    }
  } else found.set(path, value);
  return found;
}

const blank = (texts: Map<string, unknown>) =>
  [...texts].filter(([, text]) => typeof text !== 'string' || text.trim() === '').map(([path]) => path);

describe('console dictionaries', () => {
  const english = leaves(en);
  const german = leaves(de);

  it('give every English message a German one, and nothing German without an English one', () => {
    expect([...english.keys()].filter((path) => !german.has(path))).toEqual([]);
    expect([...german.keys()].filter((path) => !english.has(path))).toEqual([]);
  });

  it('have no empty message in either language', () => {
    expect(blank(english)).toEqual([]);
    expect(blank(german)).toEqual([]);
  });

  it('translate every error code the server can answer with, and no code it does not have', () => {
    const codes = [...ERROR_CODES, NO_PERMISSION_PREFIX.replace(/_$/, '')];
    for (const texts of [en.serverErrors, de.serverErrors]) {
      expect(codes.filter((code) => !Object.hasOwn(texts, code))).toEqual([]);
      expect(Object.keys(texts).filter((code) => !codes.includes(code as never))).toEqual([]);
    }
  });

  it('keep placeholders alike in both languages', () => {
    // As sets: a `one|other` text may name `{count}` in one form only (German "jede Minute|alle {count} Minuten").
    const placeholders = (text: unknown) =>
      typeof text === 'string' ? [...new Set(text.match(/\{\w+\}/g) ?? [])].sort() : [];
    const differing = [...english].filter(([path, text]) => {
      const other = german.get(path);
      return JSON.stringify(placeholders(text)) !== JSON.stringify(placeholders(other));
    });
    expect(differing.map(([path]) => path)).toEqual([]);
  });
});

describe('server error texts', () => {
  it('read a code in the UI language and fall back to the server text for an unknown code', () => {
    const duplicate = { code: 'DUPLICATE_STATE_KEY', message: 'duplicate usage of state-key', details: [] };
    expect(errorMessage(duplicate, de)).toBe(
      'Der digitale Zwilling hat schon einen Datenpunkt mit diesem Schlüssel.',
    );
    const unknown = { code: 'SOMETHING_NEW', message: 'Something new went wrong', details: [] };
    expect(serverErrorText(unknown, de)).toBeUndefined();
    expect(errorMessage(unknown, de)).toBe('Something new went wrong');
  });

  it('name the missing permission of the NO_PERMISSION family', () => {
    const error = {
      code: 'NO_PERMISSION_VIRTUALDEVICE.MANAGE',
      message: 'Missing permission virtualDevice.manage',
      details: [{ permission: 'virtualDevice.manage' }],
    };
    expect(errorMessage(error, de)).toBe('Ihnen fehlt die Berechtigung virtualDevice.manage.');
    expect(errorMessage({ ...error, details: [] }, en)).toBe('You lack the permission virtualdevice.manage.');
  });
});
