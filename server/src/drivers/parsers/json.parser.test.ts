import { describe, expect, it } from 'vitest';
import { MAX_ARRAY_ITEMS } from '../../ingest/ingest.types.js';
import { ParseError } from '../parser.types.js';
import { jsonParser } from './json.parser.js';

const parse = (text: string) => jsonParser.parse(Buffer.from(text), { type: 'json' });

describe('json parser', () => {
  it('turns an object into values', async () => {
    await expect(parse('{"temperature": 21.5, "door": true, "name": "a"}')).resolves.toEqual({
      temperature: 21.5,
      door: true,
      name: 'a',
    });
  });

  it('accepts a UTF-8 byte order mark', async () => {
    await expect(parse('\uFEFF{"a":1}')).resolves.toEqual({ a: 1 });
  });

  it(`turns an array of up to ${MAX_ARRAY_ITEMS} objects into a list of values`, async () => {
    const items = Array.from({ length: MAX_ARRAY_ITEMS }, (_, i) => ({ i }));
    await expect(parse(JSON.stringify(items))).resolves.toEqual(items);
  });

  it('refuses a longer array, naming the limit', async () => {
    const items = Array.from({ length: MAX_ARRAY_ITEMS + 1 }, (_, i) => ({ i }));
    await expect(parse(JSON.stringify(items))).rejects.toThrow(
      new ParseError(
        `JSON payload is an array of 51 items; at most ${MAX_ARRAY_ITEMS} are allowed per packet`,
      ),
    );
  });

  it('refuses arrays of non-objects, scalars and invalid JSON', async () => {
    await expect(parse('[{"a":1}, 2]')).rejects.toThrow(/item 1 is a number, not an object/);
    await expect(parse('42')).rejects.toThrow(/JSON payload is a number/);
    await expect(parse('null')).rejects.toThrow(/JSON payload is null/);
    await expect(parse('{"a":')).rejects.toThrow(/not valid JSON/);
    await expect(parse('{"a":')).rejects.toBeInstanceOf(ParseError);
  });

  it('keeps __proto__ as data without touching prototypes', async () => {
    const values = (await parse('{"__proto__": {"polluted": true}}')) as Record<string, unknown>;
    expect(Object.keys(values)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
