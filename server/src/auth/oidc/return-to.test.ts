import { describe, expect, it } from 'vitest';
import { AppError } from '../../platform/errors.js';
import { safeReturnTo } from './return-to.js';

const PUBLIC = 'https://iot.example.com';

describe('safeReturnTo', () => {
  it('keeps same-site paths with query and fragment, defaults to /', () => {
    expect(safeReturnTo(undefined, PUBLIC)).toBe('/');
    expect(safeReturnTo('', PUBLIC)).toBe('/');
    expect(safeReturnTo('/dashboards/7?tab=map#top', PUBLIC)).toBe('/dashboards/7?tab=map#top');
    expect(safeReturnTo('/a/../b', PUBLIC)).toBe('/b');
  });

  it.each([
    'https://evil.example/',
    '//evil.example/path',
    '/\\evil.example',
    '\\\\evil.example',
    '/\t/evil.example',
    'javascript:alert(1)',
    'dashboards',
    ' /dashboards',
  ])('refuses %j', (value) => {
    expect(() => safeReturnTo(value, PUBLIC)).toThrow(AppError);
  });
});
