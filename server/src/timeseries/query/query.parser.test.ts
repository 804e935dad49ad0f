import { describe, expect, it } from 'vitest';
import { AppError } from '../../platform/errors.js';
import { planQuery } from './query.analyze.js';
import { parseQuery } from './query.parser.js';

const errorOf = (fn: () => unknown): AppError => {
  try {
    fn();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error('no error thrown');
};

describe('query parser', () => {
  it('parses select items, aggregates, aliases, filters, groups, order and limit', () => {
    const query = parseQuery(
      "select bucket(15m, 'Europe/Berlin') as slot, AVG(value) AS m, count(*) from points " +
        "where state.key = 'flow' and (twin.title != 'x' or not value >= -2.5e1) and time >= now() - 30d " +
        'group by slot order by m desc, slot limit 10',
    );
    expect(query.select).toMatchObject([
      {
        expr: { kind: 'bucket', width: { amount: 15, unit: 'm', ms: 900_000 }, timeZone: 'Europe/Berlin' },
        alias: 'slot',
      },
      { expr: { kind: 'aggregate', fn: 'mean', arg: 'value' }, alias: 'm' },
      { expr: { kind: 'aggregate', fn: 'count', arg: '*' }, alias: null },
    ]);
    expect(query.where).toMatchObject({
      kind: 'and',
      left: {
        kind: 'and',
        left: {
          kind: 'compare',
          target: { name: 'state.key' },
          op: '=',
          value: { kind: 'string', value: 'flow' },
        },
        right: {
          kind: 'or',
          left: { kind: 'compare', target: { name: 'twin.title' }, op: '!=' },
          right: {
            kind: 'not',
            operand: { kind: 'compare', op: '>=', value: { kind: 'number', value: -25 } },
          },
        },
      },
      right: { kind: 'compare', value: { kind: 'time', base: { type: 'now' }, offsetMs: -30 * 86_400_000 } },
    });
    expect(query.groupBy).toMatchObject([{ expr: { kind: 'alias', name: 'slot' } }]);
    expect(query.orderBy).toMatchObject([
      { expr: { kind: 'alias', name: 'm' }, direction: 'desc' },
      { expr: { kind: 'alias', name: 'slot' }, direction: 'asc' },
    ]);
    expect(query.limit).toMatchObject({ value: 10 });
  });

  it('allows ORDER BY as the last element after LIMIT, once', () => {
    expect(parseQuery('SELECT value LIMIT 5 ORDER BY time DESC')).toMatchObject({
      limit: { value: 5 },
      orderBy: [{ expr: { kind: 'column', name: 'time' }, direction: 'desc' }],
    });
    expect(errorOf(() => parseQuery('SELECT value ORDER BY time LIMIT 5 ORDER BY value')).code).toBe(
      'QUERY_SYNTAX_ERROR',
    );
  });

  it('parses hierarchy, tags, properties, IN, BETWEEN, LIKE and IS NULL', () => {
    const query = parseQuery(
      "SELECT * WHERE twin UNDER 'a' AND twin NOT UNDER 'b' AND twin.tags CONTAINS 'pump' AND property.\"Site name\" IN ('N', 'S') " +
        "AND value NOT BETWEEN 1 AND 2 AND twin.hierarchy ILIKE 'site%' AND twin.referenceId IS NOT NULL AND value = TRUE",
    );
    const flat: unknown[] = [];
    const walk = (c: unknown): void => {
      const node = c as { kind: string; left?: unknown; right?: unknown };
      if (node.kind === 'and' && node.left) {
        walk(node.left);
        walk(node.right);
      } else flat.push(node);
    };
    walk(query.where);
    expect(flat).toMatchObject([
      { kind: 'under', twinId: { value: 'a' } },
      { kind: 'not', operand: { kind: 'under', twinId: { value: 'b' } } },
      { kind: 'hasTag', tag: { value: 'pump' } },
      {
        kind: 'in',
        target: { kind: 'property', name: 'Site name' },
        values: [{ value: 'N' }, { value: 'S' }],
      },
      { kind: 'not', operand: { kind: 'and' } },
      { kind: 'like', caseInsensitive: true, pattern: { value: 'site%' } },
      { kind: 'not', operand: { kind: 'isNull', target: { name: 'twin.referenceId' } } },
      { kind: 'compare', value: { kind: 'number', value: 1 } },
    ]);
  });

  it('reads quoted text with doubled quotes and time literals with offsets', () => {
    const query = parseQuery("SELECT value WHERE text = 'it''s' AND time < '2026-01-01' + 1d - 12h");
    expect(query.where).toMatchObject({
      left: { value: { kind: 'string', value: "it's" } },
      right: { value: { kind: 'time', base: { type: 'iso', text: '2026-01-01' }, offsetMs: 12 * 3_600_000 } },
    });
  });

  it.each([
    ['SELECT', 6, ['a column']],
    ['SELECT value WHERE', 18, []],
    ['SELECT value WHERE value >', 26, ['number']],
    ['SELECT value WHERE value = 1 AND', 32, []],
    ['SELECT value FROM accounts', 18, ['points']],
    ['SELECT value LIMIT x', 19, ['integer']],
    ['SELECT mean(text', 16, [')']],
    ['SELECT bucket(1 h)', 14, ['duration such as 15m, 1h, 30d']],
    ['SELECT value WHERE state.nope = 1', 25, ['id', 'key', 'title', 'unit']],
    ['SELECT value\nWHERE twin.title = "x', 32, ['"']],
    ['SELECT value WHERE x = 1', 19, []],
    ['SELECT value WHERE value = 1 extra', 29, ['ORDER BY', 'LIMIT', 'end of query']],
  ])('refuses %j at offset %i', (text, position, expected) => {
    const error = errorOf(() => parseQuery(text));
    expect(error.code).toBe('QUERY_SYNTAX_ERROR');
    expect(error.status).toBe(400);
    const details = error.details[0] as {
      position: number;
      expected: string[];
      line: number;
      column: number;
    };
    expect(details.position).toBe(position);
    for (const e of expected) expect(details.expected.join(' ')).toContain(e);
  });

  it('reports line and column on multi-line queries and hints at curly quotes and semicolons', () => {
    const error = errorOf(() => parseQuery('SELECT value\n  WHERE twin.title = \u2018Pump\u2019'));
    expect(error.details[0]).toMatchObject({ position: 34, line: 2, column: 22, found: '\u2018' });
    expect(error.message).toContain('straight single quote');
    expect(errorOf(() => parseQuery('SELECT value; DROP TABLE ts_points')).details[0]).toMatchObject({
      position: 12,
    });
  });

  it('bounds nesting and list sizes', () => {
    expect(
      errorOf(() => parseQuery(`SELECT value WHERE ${'('.repeat(100)}value > 1${')'.repeat(100)}`)).code,
    ).toBe('QUERY_SYNTAX_ERROR');
    const list = Array.from({ length: 1001 }, (_v, i) => i).join(',');
    expect(errorOf(() => parseQuery(`SELECT value WHERE value IN (${list})`)).code).toBe(
      'QUERY_SYNTAX_ERROR',
    );
  });
});

describe('query analysis', () => {
  const now = new Date('2026-01-31T00:00:00Z');

  it('groups implicitly by the selected columns and orders groups by their keys', () => {
    const plan = planQuery('SELECT twin.title, bucket(1d) AS day, sum(value)', now);
    expect(plan.aggregated).toBe(true);
    expect(plan.keys).toMatchObject([{ kind: 'column', name: 'twin.title' }, { kind: 'bucket' }]);
    expect(plan.columns.map((c) => [c.name, c.type])).toEqual([
      ['twin.title', 'string'],
      ['day', 'time'],
      ['sum(value)', 'number'],
    ]);
    expect(plan.sort.map((s) => s.source)).toEqual([
      { kind: 'key', index: 0 },
      { kind: 'key', index: 1 },
    ]);
    expect(plan.limit).toBe(1000);
  });

  it('resolves time literals against now and ISO text as UTC', () => {
    const plan = planQuery("SELECT value WHERE time >= now() - 1d AND time < '2026-01-31T06:00'", now);
    expect(plan.filter).toMatchObject({
      items: [{ value: new Date('2026-01-30T00:00:00Z') }, { value: new Date('2026-01-31T06:00:00Z') }],
    });
  });

  it.each([
    ["SELECT value WHERE value = 'x'", 'compares with a number'],
    ['SELECT value WHERE twin.title = 1', 'quoted text'],
    ["SELECT value WHERE state.id = 'nope'", 'UUID'],
    ["SELECT value WHERE twin UNDER 'nope'", 'UUID'],
    ["SELECT value WHERE time > '2026-02-30'", 'ISO-8601'],
    ["SELECT value WHERE twin.title > 'a'", 'Text and ids'],
    ["SELECT bucket(1h, 'Mars/Olympus'), count(*)", 'Unknown time zone'],
    ["SELECT bucket(1h, '+02:00'), count(*)", 'Unknown time zone'],
    ['SELECT twin.title, mean(value) GROUP BY state.key', 'must be in GROUP BY'],
    ['SELECT sum(text)', 'only count, first and last'],
    ['SELECT value ORDER BY mean(value)', 'needs an aggregating query'],
    ['SELECT mean(value) ORDER BY time', 'ordered by its groups'],
    ['SELECT * GROUP BY twin.title', 'cannot be grouped'],
    ['SELECT value, value', 'used twice'],
    ['SELECT value LIMIT 100001', 'LIMIT must be'],
    ['SELECT value LIMIT 0', 'LIMIT must be'],
    ["SELECT value WHERE twin.title LIKE 'x\\'", 'escape'],
  ])('refuses %j as QUERY_INVALID', (text, message) => {
    const error = errorOf(() => planQuery(text, now));
    expect(error.code).toBe('QUERY_INVALID');
    expect(error.message).toContain(message);
    expect(error.details[0]).toMatchObject({ position: expect.any(Number) as number });
  });
});
