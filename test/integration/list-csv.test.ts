import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, caller, errorCode, expectStatus, login, userWithPermissions } from './support/identity.js';
import type { ListBody } from './support/identity.js';
import { csvObjects } from './support/csv-text.js';
import { makeConnector } from './support/device-fixtures.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * Every list as CSV (`?format=csv` or `Accept: text/csv`): all matching rows in the JSON list's order,
 * past one page, only the caller's account, under the list's permission, with formula cells escaped.
 */

let t: TestApp;
let admin: ReturnType<typeof caller>;
let reader: ReturnType<typeof caller>;
let readerCredentials: ReturnType<typeof bearer>;
let works = '';
let other = '';
const otherIds = new Set<string>();
const BULK = 520;

const LISTS = [
  '/xapi/v1/virtual-devices',
  '/xapi/v1/digital-twins',
  '/xapi/v1/connectors',
  '/xapi/v1/alarm-logs',
  '/xapi/v1/gateways',
  '/xapi/v1/dashboards',
  '/xapi/v1/rules',
  '/xapi/v1/users',
];

const sql = (query: string, params: unknown[]) => t.orm.em.fork().getConnection().execute(query, params);

/** One of each listed thing in `accountId`; returns their ids. */
async function populate(accountId: string, prefix: string, eui: string): Promise<string[]> {
  const made = async (url: string, body: object) =>
    expectStatus<{ id: string }>(await admin('POST', url, { accountId, ...body }), 201).id;
  const connectorId = await makeConnector(t, accountId);
  const twinId = await made('/xapi/v1/digital-twins', { title: `${prefix} pump` });
  const ids = [
    connectorId,
    twinId,
    await made('/xapi/v1/virtual-devices', {
      device_id: `${prefix}-1`,
      title: `=HYPERLINK("x") ${prefix}`,
      connectorId,
    }),
    await made('/xapi/v1/gateways', { eui, title: `${prefix} roof` }),
    await made('/xapi/v1/dashboards', { title: `${prefix} plant` }),
    await made('/xapi/v1/rules', {
      title: `${prefix} high`,
      twinId,
      trigger: { type: 'event', conditions: [{ stateKey: 'p', operator: '>', value: 5 }] },
      commands: [{ type: 'alarm', message: 'high' }],
    }),
    await made('/xapi/v1/users', {
      email: `${prefix}@stellwerk.test`,
      name: prefix,
      suppressInvitation: true,
    }),
  ];
  const alarm = await sql(
    `INSERT INTO alarm_logs (id, account_id, category, message, reference_type, reference_id, source_kind, source_id,
       status, details, created_at, updated_at, last_seen_at)
     VALUES (gen_random_uuid(), ?, 'Rule', ?, 'digitalTwin', ?, 'rule', ?, 'open', '{}', now(), now(), now()) RETURNING id`,
    [accountId, `-1 ${prefix} pressure`, twinId, ids[5]],
  );
  return [...ids, String((alarm[0] as { id: string }).id)];
}

beforeAll(async () => {
  t = await createTestApp();
  const adminCredentials = bearer(await login(t));
  admin = caller(t, adminCredentials);
  works = expectStatus<{ id: string }>(await admin('POST', '/xapi/v1/accounts', { title: 'Works' }), 201).id;
  other = expectStatus<{ id: string }>(await admin('POST', '/xapi/v1/accounts', { title: 'Other' }), 201).id;
  const worksIds = await populate(works, 'works', 'AA-BB-CC-DD-EE-FF-00-01');
  for (const id of await populate(other, 'other', 'AA-BB-CC-DD-EE-FF-00-02')) otherIds.add(id);
  // More devices than one page holds (500), copied from the first one in SQL to keep the test quick.
  await sql(
    `INSERT INTO virtual_devices
       SELECT (jsonb_populate_record(null::virtual_devices, to_jsonb(d) || jsonb_build_object(
         'id', gen_random_uuid(), 'title', 'bulk ' || lpad(n::text, 4, '0'), 'device_id', 'bulk-' || n))).*
       FROM virtual_devices d, generate_series(1, ?) n WHERE d.id = ?`,
    [BULK, worksIds[2]],
  );
  const permissions = ['VirtualDevice.read', 'digitalTwin.read', 'connector.read', 'alarmLog.read'];
  permissions.push('gateway.read', 'dashboard.read', 'rule.read', 'user.read');
  const user = await userWithPermissions(t, adminCredentials, 'works reader', permissions, {
    accountId: works,
  });
  readerCredentials = bearer(user.token);
  reader = caller(t, readerCredentials);
}, 120_000);
afterAll(() => t?.close());

describe('lists as CSV', () => {
  it.each(LISTS)(
    '%s answers every row of the JSON list in its order, and none of another account',
    async (url) => {
      const sort = '&sort=-createdAt';
      const listed = expectStatus<ListBody<{ id: string }>>(
        await reader('GET', `${url}?pageSize=500${sort}`),
        200,
      );
      const download = await reader('GET', `${url}?format=csv${sort}`);
      expect(download.statusCode, download.body).toBe(200);
      expect(download.headers['content-type']).toBe('text/csv; charset=utf-8');
      expect(download.headers['content-disposition']).toMatch(
        /^attachment; filename="[a-z-]+-\d{4}-\d\d-\d\d\.csv"$/,
      );
      const rows = csvObjects(download.body);
      expect(rows.length).toBe(listed.meta.total);
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.slice(0, listed.data.length).map((row) => row.id)).toEqual(
        listed.data.map((row) => row.id),
      );
      expect(rows.filter((row) => otherIds.has(row.id!))).toEqual([]);
    },
  );

  it('reads past the first page and keeps the search and filters of the JSON list', async () => {
    const all = csvObjects((await reader('GET', '/xapi/v1/virtual-devices?format=csv&sort=title')).body);
    expect(all.length).toBe(BULK + 1);
    expect(all.map((row) => row.title)).toEqual([...all.map((row) => row.title)].sort());
    const search = '/xapi/v1/virtual-devices?searchItems=bulk-51&sort=-title';
    const listed = expectStatus<ListBody<{ id: string }>>(await reader('GET', search), 200);
    const searched = await t.app.inject({
      method: 'GET',
      url: search,
      headers: { ...readerCredentials, accept: 'text/csv' },
    });
    expect(listed.meta.total).toBe(11);
    expect(csvObjects(searched.body).map((row) => row.id)).toEqual(listed.data.map((row) => row.id));
  });

  it('escapes a cell a spreadsheet would run as a formula, and leaves numbers alone', async () => {
    const devices = csvObjects(
      (await reader('GET', '/xapi/v1/virtual-devices?format=csv&searchItems=works-1')).body,
    );
    expect(devices.map((row) => row.title)).toEqual([`'=HYPERLINK("x") works`]);
    const alarms = csvObjects((await reader('GET', '/xapi/v1/alarm-logs?format=csv')).body);
    expect(alarms.map((row) => row.message)).toEqual(["'-1 works pressure"]);
    expect(alarms[0]!.occurrenceCount).toBe('1');
  });

  it('writes the spreadsheet format asked for: German Excel gets semicolons and a byte order mark', async () => {
    const plain = await reader('GET', '/xapi/v1/alarm-logs?format=csv');
    const german = await reader(
      'GET',
      `/xapi/v1/alarm-logs?format=csv&delimiter=${encodeURIComponent(';')}&decimalSeparator=${encodeURIComponent(',')}&bom=true`,
    );
    expect(german.statusCode, german.body).toBe(200);
    expect(german.rawPayload.subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
    const [header, ...rows] = german.body
      .replace(/^\uFEFF/, '')
      .trimEnd()
      .split('\r\n');
    const plainHeader = plain.body.split('\r\n')[0]!;
    expect(header!.split(';')).toEqual(plainHeader.split(','));
    expect(rows.map((row) => row.split(';')[header!.split(';').indexOf('message')])).toEqual([
      "'-1 works pressure",
    ]);
    const refused = await reader('GET', '/xapi/v1/alarm-logs?format=csv&delimiter=x');
    expect(refused.statusCode).toBe(400);
  });

  it('is refused without the list permission, as a JSON error', async () => {
    const user = await userWithPermissions(t, bearer(await login(t)), 'twin reader', ['digitalTwin.read'], {
      accountId: works,
    });
    const refused = await caller(t, bearer(user.token))('GET', '/xapi/v1/virtual-devices?format=csv');
    expect(refused.statusCode).toBe(403);
    expect(refused.headers['content-type']).toMatch(/^application\/json/);
    expect(errorCode(refused)).toBe('NO_PERMISSION_VIRTUALDEVICE.READ');
    const foreign = await reader('GET', `/xapi/v1/virtual-devices?format=csv&accountId=${other}`);
    expect([403, 404]).toContain(foreign.statusCode);
  });
});
