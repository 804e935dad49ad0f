import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COUNT_CAP, keysetPage } from '../../server/src/platform/http/list-sql.js';
import { makeConnector } from './support/device-fixtures.js';
import { caller, errorCode, expectStatus, login } from './support/identity.js';
import { createTestApp, type TestApp } from './support/test-app.js';

type Page = {
  data: Array<{ id: string; title: string; device_id: string }>;
  meta: { page: number; pageSize: number; total: number; totalEstimated?: boolean; nextCursor?: string };
};

type ErrorReply = { error: { message: string } };

let t: TestApp;
let call: ReturnType<typeof caller>;
let accountId: string;
let connectorId: string;

const sql = (text: string, params: unknown[] = []) =>
  t.orm.em.fork().getConnection().execute<Array<Record<string, unknown>>>(text, params);

/** Devices straight into the table, numbered `from`..`to`: titles repeat, so the id breaks ties. */
const insertDevices = (from: number, to: number, prefix = 'meter') =>
  sql(
    `INSERT INTO virtual_devices (id, account_id, connector_id, device_id, title, description, tags, groups,
        key_value_data, activation_method, skip_frame_counter_check, health_state, dev_eui, external_id, created_at, updated_at)
     SELECT gen_random_uuid(), ?, ?, '${prefix}-' || n, 'Meter ' || (n % 7), '', '{}', '{}', '{}', 'OTAA', false, 'Unknown',
            lpad(to_hex(n * 7919), 16, '0'), 'EXT-' || n, now() - make_interval(secs => n), now()
       FROM generate_series(?::int, ?::int) AS n`,
    [accountId, connectorId, from, to],
  );

const page = async (query: string) =>
  expectStatus<Page>(await call('GET', `/xapi/v1/virtual-devices?${query}`), 200);

beforeAll(async () => {
  t = await createTestApp();
  call = caller(t, { authorization: `Bearer ${await login(t)}` });
  const account = expectStatus<{ id: string }>(
    await call('POST', '/xapi/v1/accounts', { title: 'Meters', parentId: t.rootAccountId }),
    201,
  );
  accountId = account.id;
  connectorId = await makeConnector(t, accountId);
}, 120_000);
afterAll(() => t?.close());

describe('device lists at scale', () => {
  it('walks every device exactly once by cursor while devices are added and deleted', async () => {
    await insertDevices(1, 600);
    const seen = new Map<string, number>();
    const deleted = new Set<string>();
    let after: string | undefined;
    let previous: [string, string] | undefined;
    for (let round = 0; round < 100; round++) {
      const reply = await page(
        `accountId=${accountId}&pageSize=50&sort=title${after ? `&after=${encodeURIComponent(after)}` : ''}`,
      );
      for (const device of reply.data) {
        seen.set(device.id, (seen.get(device.id) ?? 0) + 1);
        // The list's order: case-insensitive title, then id.
        const key: [string, string] = [device.title.toLowerCase(), device.id];
        if (previous)
          expect(key[0] > previous[0] || (key[0] === previous[0] && key[1] > previous[1])).toBe(true);
        previous = key;
      }
      if (round === 2) {
        // Behind the cursor and ahead of it: new devices sort among the existing ones.
        await insertDevices(601, 640, 'late');
        const victims = await sql(
          `DELETE FROM virtual_devices WHERE id IN (SELECT id FROM virtual_devices WHERE account_id = ? AND device_id LIKE 'meter-%' ORDER BY random() LIMIT 30) RETURNING id`,
          [accountId],
        );
        for (const row of victims) deleted.add(row.id as string);
      }
      after = reply.meta.nextCursor;
      if (!after) break;
    }
    const remaining = await sql(`SELECT id FROM virtual_devices WHERE account_id = ?`, [accountId]);
    // Every device that existed throughout was seen once; none twice; deleted ones at most once.
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
    const survivors = remaining.map((r) => r.id as string);
    const addedDuringWalk = new Set(
      (
        await sql(`SELECT id FROM virtual_devices WHERE account_id = ? AND device_id LIKE 'late-%'`, [
          accountId,
        ])
      ).map((r) => r.id as string),
    );
    for (const id of survivors) if (!addedDuringWalk.has(id)) expect(seen.has(id), id).toBe(true);
    expect(seen.size).toBeGreaterThanOrEqual(survivors.length - addedDuringWalk.size);
    expect(seen.size).toBeLessThanOrEqual(600 + addedDuringWalk.size);
    expect(deleted.size).toBe(30);
  });

  it('continues by cursor in descending order and by creation time, and refuses a cursor it cannot use', async () => {
    const first = await page(`accountId=${accountId}&pageSize=20&sort=-createdAt`);
    const second = await page(
      `accountId=${accountId}&pageSize=20&sort=-createdAt&after=${encodeURIComponent(first.meta.nextCursor!)}`,
    );
    const byOffset = await page(`accountId=${accountId}&pageSize=20&sort=-createdAt&page=2`);
    expect(second.data.map((d) => d.id)).toEqual(byOffset.data.map((d) => d.id));
    const descending = await page(`accountId=${accountId}&pageSize=25&sort=-title`);
    const next = await page(
      `accountId=${accountId}&pageSize=25&sort=-title&after=${encodeURIComponent(descending.meta.nextCursor!)}`,
    );
    const secondByOffset = await page(`accountId=${accountId}&pageSize=25&sort=-title&page=2`);
    expect(next.data.map((d) => d.id)).toEqual(secondByOffset.data.map((d) => d.id));

    const garbage = await call('GET', `/xapi/v1/virtual-devices?accountId=${accountId}&after=not-a-cursor`);
    expect([garbage.statusCode, errorCode(garbage)]).toEqual([400, 'VALIDATION_ERROR']);
    expect(garbage.json<ErrorReply>().error.message).toContain('nextCursor');
    const unsortable = await call(
      'GET',
      `/xapi/v1/virtual-devices?accountId=${accountId}&sort=-lastSeen&after=${encodeURIComponent(first.meta.nextCursor!)}`,
    );
    expect([unsortable.statusCode, errorCode(unsortable)]).toEqual([400, 'VALIDATION_ERROR']);
    expect(unsortable.json<ErrorReply>().error.message).toContain('title, device_id, createdAt');
    // No cursor for an order that cannot continue by one.
    expect((await page(`accountId=${accountId}&pageSize=5&sort=-lastSeen`)).meta.nextCursor).toBeUndefined();
  });

  it('orders by last seen exactly, through ingest-style updates, new devices and deletions', async () => {
    const other = expectStatus<{ id: string }>(
      await call('POST', '/xapi/v1/accounts', { title: 'Seen order', parentId: t.rootAccountId }),
      201,
    );
    const saved = accountId;
    accountId = other.id;
    try {
      connectorId = await makeConnector(t, accountId);
      await insertDevices(1, 120, 'seen');
      // Many devices in the same second with different milliseconds, some never seen, some updated
      // twice (the second one moving only the milliseconds), as the ingest's batch update does.
      const base = Date.parse('2026-11-20T10:00:00Z');
      const updates = async (round: number) => {
        const ids = await sql(`SELECT id FROM virtual_devices WHERE account_id = ? ORDER BY id`, [accountId]);
        const ts = ids.map((_r, i) =>
          i % 9 === 0
            ? null
            : new Date(base + Math.floor(i / 5) * 1000 + ((i * 37 + round * 11) % 1000)).toISOString(),
        );
        await sql(
          `UPDATE virtual_devices v SET last_seen = u.t FROM unnest(ARRAY[?]::uuid[], ARRAY[?]::timestamptz[]) AS u(d, t)
            WHERE v.id = u.d AND u.t IS NOT NULL AND (v.last_seen IS NULL OR v.last_seen < u.t)`,
          [ids.map((r) => r.id), ts],
        );
      };
      await updates(0);
      await updates(1);
      await insertDevices(121, 130, 'seen'); // never seen, created after
      const [gone] = await sql(
        `SELECT id FROM virtual_devices WHERE account_id = ? AND last_seen IS NOT NULL LIMIT 1`,
        [accountId],
      );
      await sql(`DELETE FROM virtual_devices WHERE id = ?`, [gone!.id]);
      for (const direction of ['desc', 'asc'] as const) {
        const expected = (
          await sql(
            `SELECT id FROM virtual_devices WHERE account_id = ?
              ORDER BY last_seen ${direction} NULLS ${direction === 'asc' ? 'FIRST' : 'LAST'}, id ${direction}`,
            [accountId],
          )
        ).map((r) => r.id);
        const listed: string[] = [];
        for (let n = 1; n <= 6; n++) {
          const reply = await page(
            `accountId=${accountId}&pageSize=25&page=${n}&sort=${direction === 'desc' ? '-' : ''}lastSeen`,
          );
          listed.push(...reply.data.map((d) => d.id));
        }
        expect(listed).toHaveLength(129);
        expect(listed).toEqual(expected);
      }
      // The order index holds every device of the account, and only those.
      const [counts] = await sql(
        `SELECT (SELECT count(*) FROM device_seen_order WHERE account_id = ?)::int AS indexed,
                (SELECT count(*) FROM virtual_devices WHERE account_id = ?)::int AS devices`,
        [accountId, accountId],
      );
      expect(counts).toEqual({ indexed: 129, devices: 129 });
    } finally {
      accountId = saved;
    }
  });

  it('searches title, device id, EUI and external id as one substring search, never across two fields', async () => {
    const one = async (search: string) =>
      (await page(`accountId=${accountId}&pageSize=500&searchItems=${encodeURIComponent(search)}`)).data.map(
        (d) => d.device_id,
      );
    const euiOf = (n: number) => (n * 7919).toString(16).padStart(16, '0');
    const survivor = (
      await sql(
        `SELECT device_id FROM virtual_devices WHERE account_id = ? AND device_id LIKE 'meter-%' ORDER BY device_id LIMIT 1`,
        [accountId],
      )
    )[0]!.device_id as string;
    const n = Number(survivor.slice('meter-'.length));
    expect(await one(`EXT-${n}`)).toContain(survivor);
    expect(await one(euiOf(n).toUpperCase())).toEqual([survivor]);
    expect(await one(survivor.toUpperCase())).toContain(survivor);
    // "Meter 3" + separator + "meter-…": a text that spans the title and the device id finds nothing.
    expect(await one('3meter')).toEqual([]);
    expect(await one('3\u001fmeter')).toEqual([]);
  });

  it('totals a whole account exactly at any size, and a filter exactly up to the cap', async () => {
    const count = async () =>
      Number(
        (
          (await sql(`SELECT count(*)::int AS n FROM virtual_devices WHERE account_id = ?`, [accountId])) as [
            { n: number },
          ]
        )[0].n,
      );
    const before = await page(`accountId=${accountId}&pageSize=1`);
    expect(before.meta.totalEstimated).toBeUndefined();
    expect(before.meta.total).toBe(await count());
    // Past the cap, and before any ANALYZE: still exact, from the count kept per account.
    await insertDevices(10_000, 10_000 + COUNT_CAP, 'bulk');
    const after = await page(`accountId=${accountId}&pageSize=1`);
    expect(after.meta.totalEstimated).toBeUndefined();
    expect(after.meta.total).toBe(await count());
    expect(after.meta.total).toBeGreaterThan(COUNT_CAP);
    // A filter that matches more than the cap pages through the order index with an estimate.
    await sql('ANALYZE virtual_devices');
    const many = await page(`accountId=${accountId}&pageSize=20&searchItems=bulk-`);
    expect(many.meta.totalEstimated).toBe(true);
    expect(many.meta.total).toBeGreaterThan(COUNT_CAP);
    expect(many.data).toHaveLength(20);
    expect(many.data.every((d) => d.device_id.startsWith('bulk-'))).toBe(true);
    // A filter that matches few rows is counted exactly again.
    const few = await page(`accountId=${accountId}&pageSize=1&searchItems=late-6`);
    expect(few.meta.totalEstimated).toBeUndefined();
    expect(few.meta.total).toBeGreaterThan(0);
    // A page past the end is empty, not an error.
    const beyond = await page(`accountId=${accountId}&pageSize=500&page=1000`);
    expect(beyond.data).toEqual([]);
  });

  it('counts a filter past the cap once in a while, not on every page, and a filter within it every time', async () => {
    const statements: string[] = [];
    const em = t.orm.em.fork();
    const pageOf = (pattern: string, number: number) =>
      keysetPage<{ id: string }>(
        async <T>(text: string, values: unknown[]) => {
          statements.push(text);
          return (await em.getConnection().execute(text, values)) as unknown as T;
        },
        {
          page: number,
          pageSize: 20,
          offset: (number - 1) * 20,
          orderBy: [{ field: 'createdAt', direction: 'desc' }],
          search: undefined,
        },
        {
          table: 'virtual_devices',
          alias: 'd',
          columns: { createdAt: { sql: 'd.created_at', keyset: true } },
          where: { sql: 'd.account_id = ? AND d.device_id LIKE ?', params: [accountId, pattern] },
          after: undefined,
        },
      );
    const counts = () => statements.filter((text) => text.includes('count(*)')).length;
    // createdAt is now() minus the device's number: newest first is bulk-10000, bulk-10001, …
    const expected = (number: number) =>
      Array.from({ length: 20 }, (_v, i) => `bulk-${10_000 + (number - 1) * 20 + i}`);
    const deviceIds = async (rows: Array<{ id: string }>) =>
      (
        (await sql(`SELECT device_id FROM virtual_devices WHERE id IN (?) ORDER BY created_at DESC`, [
          rows.map((r) => r.id),
        ])) as Array<{ device_id: string }>
      ).map((r) => r.device_id);
    const first = await pageOf('bulk-%', 1);
    expect(first.more.totalEstimated).toBe(true);
    expect(await deviceIds(first.rows)).toEqual(expected(1));
    expect(counts()).toBe(1);
    for (const number of [2, 3, 1]) {
      const next = await pageOf('bulk-%', number);
      expect(next.more.totalEstimated).toBe(true);
      expect(next.total).toBe(first.total);
      expect(await deviceIds(next.rows)).toEqual(expected(number));
    }
    expect(counts()).toBe(1);
    // Within the cap: exact, and counted on every request (it is in the same statement as the page).
    statements.length = 0;
    const few = await pageOf('late-6%', 1);
    await pageOf('late-6%', 1);
    expect(few.more.totalEstimated).toBeUndefined();
    expect(few.total).toBe(40);
    expect(statements.filter((text) => text.includes('count(*) FROM m')).length).toBe(2);
  });

  it('pages a filter the planner expects past the cap, but counted within it, in one statement', async () => {
    // Statistics gone stale (as between two runs of autovacuum): the planner still expects 30,000
    // "stale-" devices where 50 are left.
    await sql('ALTER TABLE virtual_devices SET (autovacuum_enabled = false)');
    await insertDevices(1, 30_000, 'stale');
    await sql('ANALYZE virtual_devices');
    await sql(
      `UPDATE virtual_devices SET device_id = 'moved-' || device_id WHERE device_id LIKE 'stale-%' AND substr(device_id, 7)::int > 50`,
    );
    const statements: string[] = [];
    const em = t.orm.em.fork();
    const firstPage = () =>
      keysetPage<{ id: string }>(
        async <T>(text: string, values: unknown[]) => {
          statements.push(text);
          return (await em.getConnection().execute(text, values)) as unknown as T;
        },
        {
          page: 1,
          pageSize: 20,
          offset: 0,
          orderBy: [{ field: 'createdAt', direction: 'desc' }],
          search: undefined,
        },
        {
          table: 'virtual_devices',
          alias: 'd',
          columns: { createdAt: { sql: 'd.created_at', keyset: true } },
          where: { sql: 'd.account_id = ? AND d.device_id LIKE ?', params: [accountId, 'stale-%'] },
          after: undefined,
        },
      );
    try {
      const first = await firstPage();
      expect(first.total).toBe(50);
      expect(statements.some((text) => text.includes('FROM m'))).toBe(false);
      statements.length = 0;
      const second = await firstPage();
      expect(second.total).toBe(50);
      expect(second.rows.map((r) => r.id)).toEqual(first.rows.map((r) => r.id));
      // Found, counted and paged in one statement; no separate count.
      expect(statements.filter((text) => text.includes('count(*) FROM m')).length).toBe(1);
      expect(statements.filter((text) => text.includes('count(*)')).length).toBe(1);
    } finally {
      await sql(
        `DELETE FROM virtual_devices WHERE device_id LIKE 'stale-%' OR device_id LIKE 'moved-stale-%'`,
      );
      await sql('ALTER TABLE virtual_devices RESET (autovacuum_enabled)');
    }
  });

  it('keeps the counts through deletes and moves between accounts, devices and twins alike', async () => {
    const other = expectStatus<{ id: string }>(
      await call('POST', '/xapi/v1/accounts', { title: 'Other meters', parentId: t.rootAccountId }),
      201,
    ).id;
    await sql(
      `DELETE FROM virtual_devices WHERE account_id = ? AND device_id IN ('bulk-10001', 'bulk-10002')`,
      [accountId],
    );
    await sql(
      `UPDATE virtual_devices SET account_id = ? WHERE account_id = ? AND device_id LIKE 'bulk-1001_'`,
      [other, accountId],
    );
    // An update that leaves the account alone moves nothing.
    await sql(
      `UPDATE virtual_devices SET title = title || '.' WHERE account_id = ? AND device_id LIKE 'bulk-1002_'`,
      [accountId],
    );
    await sql(
      `INSERT INTO digital_twins (id, account_id, path, title, custom_properties, tags, created_at, updated_at)
       SELECT gen_random_uuid(), a, '{}', 'Twin ' || n, '{}', '{}', now(), now()
         FROM generate_series(1, 30) n, unnest(ARRAY[?, ?]::uuid[]) a`,
      [accountId, other],
    );
    await sql(`DELETE FROM digital_twins WHERE account_id = ? AND title LIKE 'Twin 1%'`, [other]);
    const differing = await sql(
      `SELECT c.table_name, c.account_id FROM list_row_counts c
        WHERE c.n <> CASE c.table_name
          WHEN 'virtual_devices' THEN (SELECT count(*) FROM virtual_devices d WHERE d.account_id = c.account_id)
          ELSE (SELECT count(*) FROM digital_twins w WHERE w.account_id = c.account_id) END`,
    );
    expect(differing).toEqual([]);
    const moved = await page(`accountId=${other}&pageSize=50`);
    expect(moved.meta.total).toBe(10);
    expect(moved.data.map((d) => d.device_id).sort()).toEqual(
      Array.from({ length: 10 }, (_v, i) => `bulk-1001${i}`),
    );
  });

  it('reads a page by number past the middle from the end: the same rows in the same order', async () => {
    const total = (await page(`accountId=${accountId}&pageSize=1`)).meta.total;
    const ordered = (await sql(
      `SELECT d.id FROM virtual_devices d WHERE d.account_id = ? ORDER BY lower(d.title) ASC NULLS FIRST, d.id ASC`,
      [accountId],
    )) as Array<{ id: string }>;
    expect(ordered).toHaveLength(total);
    const size = 100;
    const last = Math.ceil(total / size);
    for (const number of [Math.floor(last / 2), Math.floor(last / 2) + 1, last - 3, last - 1, last]) {
      const reply = await page(`accountId=${accountId}&pageSize=${size}&page=${number}&sort=title`);
      expect(
        reply.data.map((d) => d.id),
        `page ${number}`,
      ).toEqual(ordered.slice((number - 1) * size, number * size).map((r) => r.id));
    }
    // The statement behind the last page walks the order index backwards, from the end.
    const statements: string[] = [];
    const em = t.orm.em.fork();
    const deep = await keysetPage<{ id: string }>(
      async <T>(text: string, values: unknown[]) => {
        statements.push(text);
        return (await em.getConnection().execute(text, values)) as unknown as T;
      },
      {
        page: last,
        pageSize: size,
        offset: (last - 1) * size,
        orderBy: [{ field: 'title', direction: 'asc' }],
        search: undefined,
      },
      {
        table: 'virtual_devices',
        alias: 'd',
        columns: { title: { sql: 'lower(d.title)', keyset: true } },
        where: { sql: 'd.account_id = ?', params: [accountId] },
        after: undefined,
        wholeAccount: accountId,
      },
    );
    expect(deep.rows.map((r) => r.id)).toEqual(ordered.slice((last - 1) * size).map((r) => r.id));
    expect(statements.find((text) => text.includes('ORDER BY'))).toMatch(
      /ORDER BY lower\(d\.title\) desc nulls last, d\.id desc/,
    );
    const descending = await page(`accountId=${accountId}&pageSize=${size}&page=${last - 1}&sort=-title`);
    const reversed = [...ordered].reverse();
    expect(descending.data.map((d) => d.id)).toEqual(
      reversed.slice((last - 2) * size, (last - 1) * size).map((r) => r.id),
    );
  });

  it('plans a filter once for a few seconds, and pages it to the same rows and count', async () => {
    const em = t.orm.em.fork();
    const statements: string[] = [];
    const execute = async <T>(text: string, values: unknown[]) => {
      statements.push(text);
      return (await em.getConnection().execute(text, values)) as unknown as T;
    };
    const params = {
      page: 1,
      pageSize: 5,
      offset: 0,
      orderBy: [{ field: 'id', direction: 'asc' as const }],
      search: undefined,
    };
    const filtered = () =>
      keysetPage<{ id: string }>(execute, params, {
        table: 'virtual_devices',
        alias: 'd',
        columns: { id: { sql: 'd.id', keyset: true } },
        where: { sql: 'd.account_id = ? AND d.device_id LIKE ?', params: [accountId, 'late-%'] },
        after: undefined,
      });
    const first = await filtered();
    const second = await filtered();
    expect(second).toEqual(first);
    expect(first.rows.length).toBeGreaterThan(0);
    expect(statements.filter((text) => text.startsWith('EXPLAIN'))).toHaveLength(1);
    // Other values are another filter: planned on their own.
    await keysetPage<{ id: string }>(execute, params, {
      table: 'virtual_devices',
      alias: 'd',
      columns: { id: { sql: 'd.id', keyset: true } },
      where: { sql: 'd.account_id = ? AND d.device_id LIKE ?', params: [accountId, 'meter-%'] },
      after: undefined,
    });
    expect(statements.filter((text) => text.startsWith('EXPLAIN'))).toHaveLength(2);
  });
});
