import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keysetPage } from '../../server/src/platform/http/list-sql.js';
import { makeConnector } from './support/device-fixtures.js';
import { caller, expectStatus, login } from './support/identity.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * A page by number deep into a large account's list starts after the nearest of the anchors the
 * server keeps per list (every 1,000th row of the order, list-anchors.ts), and stays exact when the
 * account's rows change.
 */

type Page = { data: Array<{ id: string }>; meta: { totalEstimated?: boolean } };

let t: TestApp;
let call: ReturnType<typeof caller>;

const sql = (text: string, params: unknown[] = []) =>
  t.orm.em.fork().getConnection().execute<Array<Record<string, unknown>>>(text, params);

const page = async (query: string) =>
  expectStatus<Page>(await call('GET', `/xapi/v1/virtual-devices?${query}`), 200);

beforeAll(async () => {
  t = await createTestApp();
  call = caller(t, { authorization: `Bearer ${await login(t)}` });
}, 120_000);
afterAll(() => t?.close());

describe('deep pages by number', () => {
  it('starts a page by number deep in a large account from the nearest anchor, exactly, through changes', async () => {
    const big = expectStatus<{ id: string }>(
      await call('POST', '/xapi/v1/accounts', { title: 'Anchored meters', parentId: t.rootAccountId }),
      201,
    ).id;
    const bigConnector = await makeConnector(t, big);
    await sql(
      `INSERT INTO virtual_devices (id, account_id, connector_id, device_id, title, description, tags, groups,
          key_value_data, activation_method, skip_frame_counter_check, health_state, created_at, updated_at)
       SELECT gen_random_uuid(), ?, ?, 'anchor-' || n, 'Meter ' || (n % 997), '', '{}', '{}', '{}', 'OTAA', false,
              'Unknown', now() - make_interval(secs => n % 5000), now()
         FROM generate_series(1, 45000) AS n`,
      [big, bigConnector],
    );
    const expected = async (order: string) =>
      (
        (await sql(`SELECT d.id FROM virtual_devices d WHERE d.account_id = ? ORDER BY ${order}`, [
          big,
        ])) as Array<{
          id: string;
        }>
      ).map((r) => r.id);
    const statements: string[] = [];
    const em = t.orm.em.fork();
    const execute = async <T>(text: string, values: unknown[]) => {
      statements.push(text);
      return (await em.getConnection().execute(text, values)) as unknown as T;
    };
    const columns = {
      title: { sql: 'lower(d.title)', keyset: true },
      device_id: { sql: 'lower(d.device_id)', keyset: true },
      createdAt: { sql: 'd.created_at', keyset: true },
    };
    const at = (page: number, field: string, direction: 'asc' | 'desc') =>
      keysetPage<{ id: string }>(
        execute,
        { page, pageSize: 100, offset: (page - 1) * 100, orderBy: [{ field, direction }], search: undefined },
        {
          table: 'virtual_devices',
          alias: 'd',
          columns,
          where: { sql: 'd.account_id = ?', params: [big] },
          after: undefined,
          wholeAccount: big,
        },
      );
    const anchorReads = () =>
      statements.filter((text) => text.includes('row_number() OVER (ORDER BY')).length;
    let byTitle = await expected('lower(d.title) ASC NULLS FIRST, d.id ASC');
    for (const page of [201, 225, 226]) {
      const reply = await at(page, 'title', 'asc');
      expect(
        reply.rows.map((r) => r.id),
        `page ${page}`,
      ).toEqual(byTitle.slice((page - 1) * 100, page * 100));
    }
    // Pages 201 and 225 walk forwards from an anchor of the ascending order, read once; page 226 is
    // past the middle: backwards, from an anchor of the descending order.
    expect(anchorReads()).toBe(2);
    expect(statements.filter((text) => text.includes('lower(d.title), d.id) > (?, ?::uuid)')).length).toBe(2);
    expect(statements.filter((text) => text.includes('lower(d.title), d.id) < (?, ?::uuid)')).length).toBe(1);
    const byCreation = await expected('d.created_at DESC NULLS LAST, d.id DESC');
    const reply = await at(240, 'createdAt', 'desc');
    expect(reply.rows.map((r) => r.id)).toEqual(byCreation.slice(23_900, 24_000));
    expect(anchorReads()).toBe(3);
    // A rename moves a row in the title order: the anchors of the old order are not used again, the
    // page walks (they are re-read at most every 10 s) and is exact.
    await sql(
      `UPDATE virtual_devices SET title = 'AAA first' WHERE account_id = ? AND device_id = 'anchor-777'`,
      [big],
    );
    await sql(`DELETE FROM virtual_devices WHERE account_id = ? AND device_id IN ('anchor-5', 'anchor-6')`, [
      big,
    ]);
    byTitle = await expected('lower(d.title) ASC NULLS FIRST, d.id ASC');
    const anchoredWalks = statements.filter((text) =>
      text.includes('lower(d.title), d.id) > (?, ?::uuid)'),
    ).length;
    const after = await at(225, 'title', 'asc');
    expect(after.rows.map((r) => r.id)).toEqual(byTitle.slice(22_400, 22_500));
    expect(anchorReads()).toBe(3);
    expect(statements.filter((text) => text.includes('lower(d.title), d.id) > (?, ?::uuid)')).length).toBe(
      anchoredWalks,
    );
    // A filtered list past the cap has an estimated total: never read from its end or an anchor.
    const filtered = await page(`accountId=${big}&pageSize=100&page=449&sort=title&searchItems=anchor-`);
    expect(filtered.meta.totalEstimated).toBe(true);
    expect(filtered.data.map((d) => d.id)).toEqual(byTitle.slice(44_800, 44_900));
  });
});
