import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeConnector } from './support/device-fixtures.js';
import { caller, expectStatus, login } from './support/identity.js';
import { createTestApp, type TestApp } from './support/test-app.js';

type Page = {
  data: Array<{ id: string; healthState: string }>;
  meta: { total: number; totalEstimated?: boolean };
};

/**
 * The device and twin lists' other sorts and filters (update time, health, operational status,
 * title, key-value data), as the indexes behind them answer them: the same rows in the same order
 * as the plain SQL of their meaning, over devices whose values repeat, are missing or are stored
 * as numbers, strings and booleans alike.
 */
let t: TestApp;
let call: ReturnType<typeof caller>;
let accountId: string;

const sql = (text: string, params: unknown[] = []) =>
  t.orm.em.fork().getConnection().execute<Array<Record<string, unknown>>>(text, params);

const page = async (path: string) => expectStatus<Page>(await call('GET', path), 200);

const ids = (rows: Array<Record<string, unknown>>) => rows.map((r) => r.id as string);

beforeAll(async () => {
  t = await createTestApp();
  call = caller(t, { authorization: `Bearer ${await login(t)}` });
  accountId = expectStatus<{ id: string }>(
    await call('POST', '/xapi/v1/accounts', { title: 'Orders', parentId: t.rootAccountId }),
    201,
  ).id;
  const connectorId = await makeConnector(t, accountId);
  // 1,500 devices: update times that repeat (ties broken by id), four health states, an
  // operational status that is missing on every fifth, a room stored as number, as string, as a
  // decimal, as a boolean, as an array of a string, or not at all; every seventh never seen.
  await sql(
    `INSERT INTO virtual_devices (id, account_id, connector_id, device_id, title, description, tags, groups,
        key_value_data, activation_method, skip_frame_counter_check, health_state, operational_status,
        dev_eui, external_id, last_seen, created_at, updated_at)
     SELECT gen_random_uuid(), ?, ?, 'order-' || n, 'Pump ' || (n % 40) || ' hall', '', '{}', '{}',
            CASE n % 5 WHEN 0 THEN jsonb_build_object('room', n % 13)
                       WHEN 1 THEN jsonb_build_object('room', (n % 13)::text)
                       WHEN 2 THEN jsonb_build_object('room', (n % 13)::numeric + 0.0)
                       WHEN 3 THEN jsonb_build_object('room', n % 2 = 0)
                       ELSE CASE WHEN n % 2 = 0 THEN jsonb_build_object('room', jsonb_build_array((n % 13)::text))
                                 ELSE '{}'::jsonb END END,
            'OTAA', false, (ARRAY['Healthy','Warning','Critical','Unknown'])[1 + n % 4],
            CASE WHEN n % 5 = 0 THEN NULL ELSE n % 3 END,
            lpad(to_hex(n * 31), 16, '0'), 'X-' || n,
            CASE WHEN n % 7 = 0 THEN NULL ELSE now() END,
            now() - make_interval(secs => n), now() - make_interval(secs => n % 100)
       FROM generate_series(1, 1500) AS n`,
    [accountId, connectorId],
  );
  await sql('ANALYZE virtual_devices');
}, 120_000);
afterAll(() => t?.close());

describe('device list sorts and filters behind indexes', () => {
  it('sorts by update time, health and operational status as their plain order, NULLs first ascending', async () => {
    const cases: Array<[string, string]> = [
      ['updatedAt', 'd.updated_at ASC NULLS FIRST, d.id ASC'],
      ['-updatedAt', 'd.updated_at DESC NULLS LAST, d.id DESC'],
      ['healthState', 'd.health_state ASC NULLS FIRST, d.id ASC'],
      ['-healthState', 'd.health_state DESC NULLS LAST, d.id DESC'],
      ['operationalStatus', 'd.operational_status ASC NULLS FIRST, d.id ASC'],
      ['-operationalStatus', 'd.operational_status DESC NULLS LAST, d.id DESC'],
    ];
    for (const [sort, order] of cases) {
      const expected = ids(
        await sql(`SELECT d.id FROM virtual_devices d WHERE d.account_id = ? ORDER BY ${order}`, [accountId]),
      );
      for (const number of [1, 7, 15]) {
        const reply = await page(
          `/xapi/v1/virtual-devices?accountId=${accountId}&pageSize=100&page=${number}&sort=${sort}`,
        );
        expect(
          reply.data.map((d) => d.id),
          `${sort} page ${number}`,
        ).toEqual(expected.slice((number - 1) * 100, number * 100));
      }
    }
  });

  it('filters by key-value data, title and health state exactly as their plain meaning', async () => {
    const matching = async (where: string, params: unknown[]) =>
      ids(
        await sql(
          `SELECT d.id FROM virtual_devices d WHERE d.account_id = ? AND (${where}) ORDER BY lower(d.title), d.id`,
          [accountId, ...params],
        ),
      ).sort();
    const listed = async (query: string) => {
      const found: string[] = [];
      for (let number = 1; number <= 10; number++) {
        const reply = await page(
          `/xapi/v1/virtual-devices?accountId=${accountId}&pageSize=500&page=${number}&${query}`,
        );
        found.push(...reply.data.map((d) => d.id));
        if (reply.data.length < 500) {
          expect(reply.meta.total, query).toBe(found.length);
          break;
        }
      }
      return found.sort();
    };
    const cases: Array<[string, string, unknown[]]> = [
      // 7 is the text "7", the number 7 and the number 7.0; never an array holding "7".
      ['filter%5Bkv.room%5D=7', `(d.key_value_data -> 'room') IN (?::jsonb, ?::jsonb)`, ['"7"', '7']],
      ['filter%5Bkv.room%5D=7.0', `(d.key_value_data -> 'room') IN (?::jsonb, ?::jsonb)`, ['"7.0"', '7.0']],
      [
        'filter%5Bkv.room%5D=true',
        `(d.key_value_data -> 'room') IN (?::jsonb, ?::jsonb)`,
        ['"true"', 'true'],
      ],
      [
        'filter%5Bkv.room%5D%5Bnot%5D=7',
        `(d.key_value_data -> 'room') IS NULL OR (d.key_value_data -> 'room') NOT IN (?::jsonb, ?::jsonb)`,
        ['"7"', '7'],
      ],
      ['filter%5Bkv.room%5D=%5B%227%22%5D', `(d.key_value_data ->> 'room') = ?`, ['["7"]']],
      ['filter%5Bkv.floor%5D=7', `(d.key_value_data -> 'floor') IN (?::jsonb, ?::jsonb)`, ['"7"', '7']],
      ['filter%5Btitle%5D=pump%2012%20', `d.title ILIKE ?`, ['%pump 12 %']],
      ['filter%5Btitle%5D=order-1', `d.title ILIKE ?`, ['%order-1%']],
      [
        'healthState=Unknown',
        `CASE WHEN d.last_seen IS NULL THEN 'Unknown' ELSE d.health_state END = ?`,
        ['Unknown'],
      ],
      [
        'healthState=Warning',
        `CASE WHEN d.last_seen IS NULL THEN 'Unknown' ELSE d.health_state END = ?`,
        ['Warning'],
      ],
    ];
    for (const [query, where, params] of cases) {
      const expected = await matching(where, params);
      expect(await listed(query), query).toEqual(expected);
    }
    // The cases are not all empty or all rows.
    // 7 as a number, as text and as 7.0 (23 each), true as a boolean, ["7"] as an array.
    expect((await listed('filter%5Bkv.room%5D=7')).length).toBe(69);
    expect((await listed('filter%5Bkv.room%5D=7.0')).length).toBe(46);
    expect((await listed('filter%5Bkv.room%5D=%5B%227%22%5D')).length).toBeGreaterThan(10);
    expect((await listed('filter%5Bkv.room%5D=true')).length).toBe(150);
    expect(await listed('filter%5Btitle%5D=order-1')).toEqual([]);
    expect((await listed('healthState=Unknown')).length).toBeGreaterThan(375);
  });
});

describe('twin list sorts and filters behind indexes', () => {
  it('sorts by update time and filters custom properties as their plain order and condition', async () => {
    await sql(
      `INSERT INTO digital_twins (id, account_id, path, title, custom_properties, tags, created_at, updated_at)
       SELECT gen_random_uuid(), ?, '{}', 'Hall ' || n, jsonb_build_object('floor', (n % 4)::text), '{}',
              now() - make_interval(secs => n), now() - make_interval(secs => n % 50)
         FROM generate_series(1, 400) AS n`,
      [accountId],
    );
    const expected = ids(
      await sql(
        `SELECT t.id FROM digital_twins t WHERE t.account_id = ? ORDER BY t.updated_at DESC NULLS LAST, t.id DESC`,
        [accountId],
      ),
    );
    const reply = await page(
      `/xapi/v1/digital-twins?accountId=${accountId}&pageSize=50&page=3&sort=-updatedAt`,
    );
    expect(reply.data.map((d) => d.id)).toEqual(expected.slice(100, 150));
    const floor = await page(
      `/xapi/v1/digital-twins?accountId=${accountId}&pageSize=500&filter%5Bkv.floor%5D=2`,
    );
    expect(floor.meta.total).toBe(100);
  });
});
