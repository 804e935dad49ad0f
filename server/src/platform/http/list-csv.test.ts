import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { csvCell, csvColumns, listItemSchema } from './list-csv.js';
import { listReply } from './schemas.js';

describe('list CSV', () => {
  it('finds the item schema of a list reply only', () => {
    const item = Type.Object({ id: Type.String(), title: Type.String(), tags: Type.Array(Type.String()) });
    expect(csvColumns(listItemSchema(listReply(item))!).names).toEqual(['id', 'title', 'tags']);
    expect(listItemSchema(item)).toBeUndefined();
    expect(listItemSchema(Type.Object({ data: Type.Array(item) }))).toBeUndefined();
  });

  it('writes plain values as they are, dates as ISO text, lists joined and objects as JSON', () => {
    expect(csvCell('text')).toBe('text');
    expect(csvCell(-3.5)).toBe(-3.5);
    expect(csvCell(null)).toBeNull();
    expect(csvCell(new Date('2026-11-27T10:00:00Z'))).toBe('2026-11-27T10:00:00.000Z');
    expect(csvCell(['roof', 'north'])).toBe('roof; north');
    expect(csvCell({ a: 1 })).toBe('{"a":1}');
    expect(csvCell([{ a: 1 }])).toBe('[{"a":1}]');
  });
});
