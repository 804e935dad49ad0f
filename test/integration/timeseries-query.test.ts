import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresTarget } from '../../server/src/timeseries/targets/postgres.target.js';
import { planQuery } from '../../server/src/timeseries/query/query.analyze.js';
import { compileSql } from '../../server/src/timeseries/query/query.compile-sql.js';
import { TimeSeriesQueryService } from '../../server/src/timeseries/query/query.service.js';
import type { PointFilter, TimeSeriesTarget } from '../../server/src/timeseries/timeseries.types.js';
import type { Principal } from '../../server/src/auth/principal.js';
import { bearer, caller, errorCode, expectStatus, login, userWithPermissions } from './support/identity.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { TimeSeriesFixtures } from './support/timeseries-fixtures.js';

// The query endpoint on real PostgreSQL: JSON, CSV, GET/POST, SQL path vs evaluator, injection, tenancy.

interface QueryReply {
  columns: Array<{ name: string; type: string }>;
  rows: unknown[][];
  meta: { target: string; rowCount: number; limit: number };
}

const URL = '/xapi/v1/timeseries/query';
const START = Date.parse('2026-01-01T00:00:00Z');
const MINUTE = 60_000;
let t: TestApp;
let pool: pg.Pool;
let call: ReturnType<typeof caller>;
let otherAccountId: string;
let fx: TimeSeriesFixtures;
let ids: Record<string, string>;
const sql = (text: string, params: unknown[] = []) => fx.sql(text, params);

const query = async (text: string, extra: Record<string, unknown> = {}) =>
  expectStatus<QueryReply>(await call('POST', URL, { query: text, ...extra }), 200);

beforeAll(async () => {
  t = await createTestApp();
  pool = new pg.Pool({ connectionString: String(t.orm.config.get('clientUrl')), max: 2 });
  fx = new TimeSeriesFixtures(pool);
  ids = fx.ids;
  const twin = fx.twin.bind(fx);
  const state = fx.state.bind(fx);
  const points = fx.points.bind(fx);
  call = caller(t, bearer(await login(t)));
  otherAccountId = expectStatus<{ id: string }>(
    await call('POST', '/xapi/v1/accounts', { title: 'Other', parentId: t.rootAccountId }),
    201,
  ).id;
  const root = t.rootAccountId;
  const site = await twin('Site', root, null, { site: 'Nord' });
  const hall1 = await twin('Hall 1', root, site);
  const hall2 = await twin('Hall 2', root, site);
  const pump3 = await twin('Pump 3', root, hall1, { site: 'Nord', vendor: 'Acme' }, ['pump']);
  const pump4 = await twin('Pump 4', root, hall2, { site: 'Süd' }, ['pump', 'spare']);
  // Pump 3 flow: every 10 minutes for a day, value = index (exact sums and means).
  await state('flow3', root, pump3, 'flow', 'm³/h');
  await points(
    ids.flow3!,
    Array.from({ length: 144 }, (_v, i) => ({ time: START + i * 10 * MINUTE, value: i })),
  );
  await state('flow4', root, pump4, 'flow', 'm³/h');
  await points(
    ids.flow4!,
    Array.from({ length: 48 }, (_v, i) => ({ time: START + i * 30 * MINUTE, value: 100 + i })),
  );
  await state('status3', root, pump3, 'status');
  await points(ids.status3!, [
    { time: START, text: 'ok' },
    { time: START + MINUTE, text: 'needs "service", soon' },
    { time: START + 2 * MINUTE, text: 'line 1\nline 2' },
    { time: START + 3 * MINUTE, text: null, value: 1 },
    { time: START + 4 * MINUTE, text: "'; DROP TABLE ts_points; --" },
  ]);
  // Daylight-saving changes in Europe/Berlin (2026-03-29 and 2026-10-25), every 15 minutes.
  await state('dst', root, pump4, 'dst');
  for (const from of ['2026-03-28T18:00:00Z', '2026-10-24T18:00:00Z'])
    await points(
      ids.dst!,
      Array.from({ length: 160 }, (_v, i) => ({ time: Date.parse(from) + i * 15 * MINUTE, value: i % 7 })),
    );
  // Another account's twin, with values that must never show up in the root account's answers.
  const secret = await twin('Secret', otherAccountId, null, { site: 'Nord' }, ['pump']);
  await state('secretFlow', otherAccountId, secret, 'flow');
  await points(
    ids.secretFlow!,
    Array.from({ length: 24 }, (_v, i) => ({ time: START + i * 60 * MINUTE, value: 9999 })),
  );
}, 120_000);

afterAll(async () => {
  await pool?.end();
  await t?.close();
});

describe('time-series query endpoint', () => {
  it('returns raw points with twin and state columns, oldest first', async () => {
    const reply = await query(
      "SELECT time, value, state.key, state.unit, twin.title, twin.referenceId WHERE twin.title = 'Pump 3' AND state.key = 'flow' AND time < '2026-01-01T01:00:00Z'",
    );
    expect(reply.columns.map((c) => c.name)).toEqual([
      'time',
      'value',
      'state.key',
      'state.unit',
      'twin.title',
      'twin.referenceId',
    ]);
    expect(reply.rows).toHaveLength(6);
    expect(reply.rows[0]).toEqual(['2026-01-01T00:00:00.000Z', 0, 'flow', 'm³/h', 'Pump 3', 'ref-Pump 3']);
    expect(reply.rows.map((r) => r[1])).toEqual([0, 1, 2, 3, 4, 5]);
    expect(reply.meta).toEqual({ target: 'postgres', rowCount: 6, limit: 1000 });
  });

  it('buckets hourly means', async () => {
    const reply = await query(
      "SELECT bucket(1h) AS hour, mean(value) AS mean, avg(value) AS avg2, count(*) AS n, min(value), max(value), first(value), last(value), sum(value) WHERE state.id = '" +
        ids.flow3 +
        "' GROUP BY hour",
    );
    expect(reply.rows).toHaveLength(24);
    expect(reply.rows[0]).toEqual(['2026-01-01T00:00:00.000Z', 2.5, 2.5, 6, 0, 5, 0, 5, 15]);
    expect(reply.rows[23]).toEqual(['2026-01-01T23:00:00.000Z', 140.5, 140.5, 6, 138, 143, 138, 143, 843]);
    expect(reply.columns.map((c) => c.type)).toEqual(Array(9).fill('number').fill('time', 0, 1));
  });

  it('filters on the twin hierarchy and shows it as a title path', async () => {
    const under = await query(
      `SELECT twin.hierarchy, state.key, count(*) AS n WHERE twin UNDER '${ids['Hall 1']}' GROUP BY twin.hierarchy, state.key`,
    );
    expect(under.rows).toEqual([
      ['Site / Hall 1 / Pump 3', 'flow', 144],
      ['Site / Hall 1 / Pump 3', 'status', 5],
    ]);
    const all = await query(
      `SELECT twin.title, count(*) AS n WHERE twin UNDER '${ids.Site}' AND state.key = 'flow'`,
    );
    expect(all.rows).toEqual([
      ['Pump 3', 144],
      ['Pump 4', 48],
    ]);
    const like = await query(
      "SELECT count(*) WHERE twin.hierarchy LIKE 'Site / Hall 2 /%' AND state.key = 'flow'",
    );
    expect(like.rows).toEqual([[48]]);
  });

  it('filters on custom properties and tags', async () => {
    const sued = await query("SELECT twin.title, count(*) WHERE property.site = 'Süd' GROUP BY twin.title");
    expect(sued.rows).toEqual([['Pump 4', 48 + 320]]);
    const tagged = await query(
      "SELECT twin.title, property.vendor AS vendor, count(*) AS n WHERE twin.tags CONTAINS 'pump' AND NOT twin.tags CONTAINS 'spare' AND state.key IN ('flow', 'status')",
    );
    expect(tagged.rows).toEqual([['Pump 3', 'Acme', 149]]);
  });

  it('accepts ORDER BY as the last element, after LIMIT, and still sorts before limiting', async () => {
    const reply = await query(`SELECT value WHERE state.id = '${ids.flow3}' LIMIT 3 ORDER BY time DESC`);
    expect(reply.rows).toEqual([[143], [142], [141]]);
    const before = await query(`SELECT value WHERE state.id = '${ids.flow3}' ORDER BY time DESC LIMIT 3`);
    expect(before.rows).toEqual(reply.rows);
  });

  it('answers the same over GET ?query=', async () => {
    const text = `SELECT value WHERE state.id = '${ids.flow3}' LIMIT 2`;
    const viaGet = expectStatus<QueryReply>(
      await call('GET', `${URL}?query=${encodeURIComponent(text)}`),
      200,
    );
    expect(viaGet.rows).toEqual((await query(text)).rows);
  });

  it('is documented in the OpenAPI document with JSON and CSV answers', async () => {
    const doc = (await t.app.inject({ url: '/xapi/v1/openapi.json' })).json<{
      paths: Record<string, Record<string, { responses: Record<string, { content?: object }> }>>;
    }>();
    const post = doc.paths['/xapi/v1/timeseries/query']!.post!;
    expect(Object.keys(post.responses['200']!.content ?? {})).toEqual(['application/json', 'text/csv']);
  });

  it('writes RFC 4180 CSV with Accept: text/csv', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: URL,
      headers: { ...bearer(await login(t)), accept: 'text/csv' },
      payload: { query: `SELECT time, text AS "the text", value WHERE state.key = 'status' ORDER BY time` },
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(response.body).toBe(
      'time,the text,value\r\n' +
        '2026-01-01T00:00:00.000Z,ok,\r\n' +
        '2026-01-01T00:01:00.000Z,"needs ""service"", soon",\r\n' +
        '2026-01-01T00:02:00.000Z,"line 1\nline 2",\r\n' +
        '2026-01-01T00:03:00.000Z,,1\r\n' +
        "2026-01-01T00:04:00.000Z,'; DROP TABLE ts_points; --,\r\n",
    );
  });

  it('refuses syntax errors with position and expectation', async () => {
    const response = await call('POST', URL, { query: 'SELECT value WHERE value >' });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({
      error: {
        code: 'QUERY_SYNTAX_ERROR',
        message: expect.stringContaining('line 1, column 27') as string,
        details: [
          {
            position: 26,
            line: 1,
            column: 27,
            expected: expect.arrayContaining(['number']) as string[],
            found: 'end of query',
          },
        ],
      },
    });
    const invalid = await call('POST', URL, { query: 'SELECT twin.title, mean(value) GROUP BY state.key' });
    expect(invalid.statusCode).toBe(400);
    expect(errorCode(invalid)).toBe('QUERY_INVALID');
  });

  it('refuses injection attempts with 400 and leaves the tables intact', async () => {
    const count = async () => Number((await sql('SELECT count(*) AS n FROM ts_points')).rows[0]!.n);
    const before = await count();
    const attempts = [
      "SELECT value WHERE twin.title = ''; DROP TABLE ts_points; --'",
      "SELECT value WHERE twin.title = 'x'; DROP TABLE ts_points; --",
      'SELECT value; select * from accounts',
      'SELECT value; DELETE FROM ts_points',
      'SELECT value -- comment',
      'SELECT value /* comment */',
      'SELECT "value; select" FROM points',
      'SELECT property."x\') IS NULL OR 1=1 --" WHERE value > 1; DROP TABLE ts_points',
      'SELECT value WHERE twin.title = \u2018x\u2019 OR 1=1',
      'SELECT value WHERE twin.title = \u201Cx\u201D',
      "SELECT value WHERE state.id = '1 OR 1=1'",
      "SELECT value WHERE twin UNDER 'x''; DROP TABLE ts_points; --'",
      'SELECT value UNION SELECT password_hash FROM users',
      'SELECT pg_sleep(10)',
      "SELECT bucket(1h, 'UTC''; DROP TABLE ts_points; --') , mean(value)",
      'SELECT value WHERE ' + '('.repeat(500) + 'value > 1' + ')'.repeat(500),
      'SELECT value WHERE value IN (' + Array.from({ length: 2000 }, (_v, i) => i).join(',') + ')',
      'SELECT value ' + 'x'.repeat(20_000),
      'SELECT value\u0000',
    ];
    for (const attempt of attempts) {
      const response = await call('POST', URL, { query: attempt });
      expect(response.statusCode, `${attempt.slice(0, 80)} → ${response.body.slice(0, 200)}`).toBe(400);
      expect(['QUERY_SYNTAX_ERROR', 'QUERY_INVALID', 'VALIDATION_ERROR']).toContain(errorCode(response));
    }
    expect(await count()).toBe(before);
    // A property name and text values full of SQL are just data: bound, never executed.
    const odd = await query(
      `SELECT count(*) WHERE property."x') IS NULL OR 1=1 --" = 'y' OR text = '''; DROP TABLE ts_points; --'`,
    );
    expect(odd.rows).toEqual([[1]]);
    expect(await count()).toBe(before);
  });

  it('keeps accounts apart: another account never appears unless reachable and asked for', async () => {
    const own = await query("SELECT max(value) AS top WHERE state.key = 'flow'");
    expect(own.rows).toEqual([[147]]);
    const withSubAccounts = await query("SELECT max(value) AS top WHERE state.key = 'flow'", {
      includeSubAccounts: true,
    });
    expect(withSubAccounts.rows).toEqual([[9999]]);
    const asOther = await query("SELECT twin.title, count(*) WHERE state.key = 'flow'", {
      accountId: otherAccountId,
    });
    expect(asOther.rows).toEqual([['Secret', 24]]);

    const reader = await userWithPermissions(t, bearer(await login(t)), 'Other reader', ['timeseries.read'], {
      accountId: otherAccountId,
    });
    const callOther = caller(t, bearer(reader.token));
    const visible = expectStatus<QueryReply>(
      await callOther('POST', URL, { query: 'SELECT twin.title, count(*) AS n', includeSubAccounts: true }),
      200,
    );
    expect(visible.rows).toEqual([['Secret', 24]]);
    const refused = await callOther('POST', URL, { query: 'SELECT count(*)', accountId: t.rootAccountId });
    expect(refused.statusCode).toBe(404);
    const noPermission = await userWithPermissions(t, bearer(await login(t)), 'No ts', ['user.read']);
    const denied = await caller(t, bearer(noPermission.token))('POST', URL, { query: 'SELECT count(*)' });
    expect(denied.statusCode).toBe(403);
  });
});

describe('SQL path and in-memory evaluator', () => {
  const QUERIES = [
    'SELECT * LIMIT 500',
    "SELECT time, value, text, state.key, twin.hierarchy WHERE twin.title IN ('Pump 3', 'Pump 4') AND (value >= 100 OR text IS NOT NULL) LIMIT 50 ORDER BY time DESC",
    "SELECT bucket(1h) AS hour, state.key, mean(value), count(*), count(text), first(text), last(text), sum(value) WHERE time >= '2026-01-01T03:00:00Z' AND time < '2026-01-01T09:30:00Z' GROUP BY hour, state.key ORDER BY hour DESC",
    'SELECT twin.title, property.site AS site, max(value) AS top ORDER BY top DESC',
    "SELECT bucket(1h, 'Europe/Berlin') AS hour, count(*) AS n, first(value), last(value) WHERE state.key = 'dst'",
    "SELECT bucket(1d, 'Europe/Berlin') AS day, mean(value) AS m, count(*) WHERE state.key = 'dst' GROUP BY day",
    "SELECT bucket(1w) AS week, count(*) WHERE NOT (state.key = 'dst' OR twin.referenceId = 'ref-Pump 4')",
    "SELECT count(*), mean(value) WHERE value BETWEEN 10 AND 20 AND NOT twin.title LIKE 'Pump _' OR twin.title ILIKE 'pump 3'",
    'SELECT count(*), sum(value) WHERE time > now() + 1d',
    `SELECT value, time WHERE state.id IN ('${randomUUID()}') OR twin.referenceId IS NULL`,
    'SELECT text, count(*) AS n WHERE text IS NOT NULL GROUP BY text ORDER BY text DESC',
    'SELECT property.vendor AS vendor, twin.title AS title, count(*) ORDER BY vendor, title DESC',
  ];

  it.each(QUERIES)('agree on %s', async (text) => {
    const target = new PostgresTarget('postgres', pool);
    const plan = planQuery(text, new Date('2026-01-01T12:00:00Z'));
    const tenancy = { accountId: t.rootAccountId, includeSubAccounts: true };
    const viaSql = await t.withContext(() => t.services.timeseriesQuery.runSql(plan, tenancy));
    const viaMemory = await t.withContext(() =>
      t.services.timeseriesQuery.runInMemory(plan, tenancy, target),
    );
    const normalise = (rows: unknown[][]) =>
      rows.map((r) =>
        r.map((c) =>
          c instanceof Date ? c.toISOString() : typeof c === 'string' && /^\d+$/.test(c) ? Number(c) : c,
        ),
      );
    expect(normalise(viaMemory)).toEqual(normalise(viaSql));
  });

  it('buckets across daylight-saving changes in the given time zone', async () => {
    const reply = await query(
      "SELECT bucket(1d, 'Europe/Berlin') AS day, count(*) AS n WHERE state.key = 'dst' AND time >= '2026-10-24T22:00:00Z' AND time < '2026-10-25T23:00:00Z'",
    );
    // 25 October 2026 in Berlin has 25 hours: 100 quarter hours, starting at 22:00 UTC the day before.
    expect(reply.rows).toEqual([['2026-10-24T22:00:00.000Z', 100]]);
  });

  it('reads a single state range through the (state_id, time) index', async () => {
    const bulk = await fx.state('bulk', t.rootAccountId, ids['Pump 3']!, 'bulk');
    await sql(
      `INSERT INTO ts_points (state_id, time, value)
       SELECT s.id, timestamptz '2025-01-01' + g * interval '1 minute', g
       FROM generate_series(1, 20000) g, (SELECT $1::uuid AS id UNION ALL SELECT gen_random_uuid() FROM generate_series(1, 9)) s`,
      [bulk],
    );
    await sql('ANALYZE ts_points');
    const plan = planQuery(
      `SELECT bucket(1h), mean(value) WHERE state.id = '${bulk}' AND time >= '2025-01-02T00:00:00Z' AND time < '2025-01-03T00:00:00Z'`,
      new Date(),
    );
    const compiled = compileSql(plan, { accountId: t.rootAccountId, includeSubAccounts: false });
    const explained = await t.orm.em
      .getConnection()
      .execute<Array<{ 'QUERY PLAN': string }>>(`EXPLAIN ${compiled.sql}`, compiled.params, 'all');
    const text = explained.map((r) => r['QUERY PLAN']).join('\n');
    expect(text).toMatch(
      /Index (Only )?Scan using ts_points\w*state_id_time\w*|Bitmap Index Scan on ts_points\w*state_id_time\w*/,
    );
    expect(text).not.toMatch(/Seq Scan on ts_points/);
  });

  it('evaluates in memory when a non-PostgreSQL target serves, and bounds time and points', async () => {
    const postgres = new PostgresTarget('postgres', pool);
    const standIn: TimeSeriesTarget = {
      name: 'influx-site',
      kind: 'influxdb-v1',
      write: () => Promise.resolve(),
      readPoints: (filter) => postgres.readPoints(filter),
      health: () => Promise.resolve(true),
      close: () => Promise.resolve(),
    };
    const reads = {
      servingTarget: () => Promise.resolve(standIn),
      readPoints: (f: PointFilter) => standIn.readPoints(f),
    };
    const principal: Principal = {
      kind: 'user',
      id: 'test',
      userId: null,
      apiKeyId: null,
      accountId: t.rootAccountId,
      permissions: new Set(['all.manage']),
      permissionScopeIds: null,
      sessionId: null,
    };
    const service = (options = {}) =>
      new TimeSeriesQueryService(t.ctx.em, t.services.accounts, () => new Date(START), reads, options);
    const text = `SELECT bucket(1h) AS hour, mean(value) WHERE state.id = '${ids.flow3}' LIMIT 2`;
    const inMemory = await t.withContext(() => service().run(principal, { query: text }));
    expect(inMemory.meta.target).toBe('influx-site');
    expect(inMemory.rows).toEqual([
      ['2026-01-01T00:00:00.000Z', 2.5],
      ['2026-01-01T01:00:00.000Z', 8.5],
    ]);
    await expect(
      t.withContext(() => service({ maxEvaluatedPoints: 10 }).run(principal, { query: text })),
    ).rejects.toMatchObject({ code: 'QUERY_TOO_LARGE', status: 422 });
    const slow = new TimeSeriesQueryService(t.ctx.em, t.services.accounts, () => new Date(), null, {
      statementTimeoutMs: 1,
    });
    await expect(
      t.withContext(() =>
        slow.run(principal, { query: 'SELECT state.id, count(*), mean(value), last(value)' }),
      ),
    ).rejects.toMatchObject({ code: 'QUERY_TIMEOUT', status: 422 });
    // The statement runs in a read-only transaction: not even a compiler bug could write.
    const statement = service() as unknown as {
      select(s: { sql: string; params: unknown[] }): Promise<unknown>;
    };
    await expect(
      t.withContext(() => statement.select({ sql: 'DELETE FROM sessions WHERE false', params: [] })),
    ).rejects.toMatchObject({ code: '25006' });
  });
});
