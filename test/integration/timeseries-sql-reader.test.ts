import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TimeSeriesSqlReader } from '../../server/src/timeseries/query/query.sql-reader.js';
import { createTestDatabase } from './support/database.js';

/**
 * The query endpoint's own connections: one round trip a statement, so what a transaction and its
 * `SET`s enforced before must hold on the connections themselves.
 */
let database: { url: string; drop: () => Promise<void> };
let reader: TimeSeriesSqlReader;

beforeAll(async () => {
  database = await createTestDatabase();
  reader = new TimeSeriesSqlReader({ databaseUrl: database.url, statementTimeoutMs: 300, connections: 1 });
});

afterAll(async () => {
  await reader?.close();
  await database?.drop();
});

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => null,
    (error: { code?: string }) => error.code,
  );

describe('time-series SQL reader', () => {
  it('cannot write, on either kind of connection', async () => {
    for (const genericPlan of [false, true]) {
      const code = await failure(
        reader.select({ sql: 'CREATE TABLE written (id int)', params: [], genericPlan }),
      );
      expect(code).toBe('25006'); // read_only_sql_transaction
    }
  });

  it('cancels a statement that runs past the timeout, and the connection serves the next one', async () => {
    expect(await failure(reader.select({ sql: 'SELECT pg_sleep(?) AS s', params: [2] }))).toBe('57014');
    expect(
      await failure(reader.select({ sql: 'SELECT pg_sleep(?) AS s', params: [2], genericPlan: true })),
    ).toBe('57014');
    expect(await reader.select({ sql: 'SELECT ?::int + 1 AS n', params: [41] })).toEqual([{ n: 42 }]);
  });

  it('binds lists as knex does and hands times over as text, as the ORM path does', async () => {
    const rows = await reader.select({
      sql: "SELECT count(*)::int AS n, ?::timestamptz AT TIME ZONE 'UTC' AS local, ?::timestamptz AS t FROM generate_series(1, 5) g WHERE g IN (?)",
      params: ['2026-03-29T01:30:00Z', '2026-03-29T01:30:00Z', [2, 3, 9]],
      genericPlan: true,
    });
    expect(rows).toEqual([{ n: 2, local: '2026-03-29 01:30:00', t: '2026-03-29 01:30:00+00' }]);
  });

  it('prepares a statement once per connection and reuses its generic plan', async () => {
    const statement = (id: number) => ({ sql: 'SELECT ?::int * 2 AS n', params: [id], genericPlan: true });
    for (let i = 0; i < 5; i++) expect(await reader.select(statement(i))).toEqual([{ n: i * 2 }]);
    const { rows } = await reader.pools.generic.query<{ statement: string; generic_plans: string }>(
      'SELECT statement, generic_plans FROM pg_prepared_statements',
    );
    const mine = rows.find((r) => r.statement.includes('$1::int * 2'));
    expect(Number(mine?.generic_plans)).toBe(5);
  });

  it('keeps at most the configured number of statements prepared, and still runs the others', async () => {
    const small = new TimeSeriesSqlReader({ databaseUrl: database.url, connections: 1, maxPrepared: 2 });
    try {
      for (let i = 0; i < 4; i++)
        expect(
          await small.select({ sql: `SELECT ?::int + ${i} AS n`, params: [1], genericPlan: true }),
        ).toEqual([{ n: 1 + i }]);
      const prepared = await small.pools.generic.query('SELECT name FROM pg_prepared_statements');
      expect(prepared.rows).toHaveLength(2);
    } finally {
      await small.close();
    }
  });
});
