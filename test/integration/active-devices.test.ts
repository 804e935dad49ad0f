import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertConnector, insertDevice, sql } from './support/ingest-fixtures.js';
import { bearer, caller, errorCode, expectStatus, login, userWithPermissions } from './support/identity.js';
import { buildTenancyWorld, type TenancyWorld } from './support/tenancy-world.js';
import { createTestApp, type TestApp } from './support/test-app.js';

interface ActiveCount {
  count: number;
  from: string;
  to: string;
  accountId: string;
  includeSubAccounts: boolean;
}

let t: TestApp;
let world: TenancyWorld;
let call: ReturnType<typeof caller>;

beforeAll(async () => {
  t = await createTestApp();
  world = await buildTenancyWorld(t);
  call = caller(t, { authorization: `Bearer ${await login(t)}` });
}, 120_000);
afterAll(() => t?.close());

const DAY = 86_400_000;
const at = (iso: string) => new Date(iso);
const activeCount = async (query: string) =>
  expectStatus<ActiveCount>(await call('GET', `/xapi/v1/virtual-devices/active-count?${query}`), 200);

async function device(accountId: string, key: string, connectorId: string, lastSeen: Date | null) {
  const id = await insertDevice(t, { connectorId, deviceKey: key, accountId });
  await sql(t, 'UPDATE virtual_devices SET last_seen = ? WHERE id = ?', [lastSeen, id]);
  return id;
}

const storePacket = (connectorId: string, deviceKey: string, receivedAt: Date) =>
  sql(
    t,
    `INSERT INTO packets (connector_id, device_key, received_at, payload, source) VALUES (?, ?, ?, ?, 'test')`,
    [connectorId, deviceKey, receivedAt, Buffer.from('{}')],
  );

describe('active-devices count', () => {
  it('answers 0 for a 30-day range of an account without devices', async () => {
    const empty = world.accounts.sibling;
    const to = new Date();
    const from = new Date(to.getTime() - 30 * DAY);
    const body = await activeCount(
      `accountId=${empty}&from=${from.toISOString()}&to=${to.toISOString()}&includeSubAccounts=true`,
    );
    expect(body).toEqual({
      count: 0,
      from: from.toISOString(),
      to: to.toISOString(),
      accountId: empty,
      includeSubAccounts: true,
    });
    // Without a range: the last 30 days up to now.
    const defaults = await activeCount(`accountId=${empty}`);
    expect(defaults.count).toBe(0);
    expect(Date.parse(defaults.to) - Date.parse(defaults.from)).toBe(30 * DAY);
    expect(Math.abs(Date.parse(defaults.to) - Date.now())).toBeLessThan(60_000);
  });

  it('counts devices that sent a packet in the range, optionally in sub-accounts', async () => {
    const own = world.accounts.own;
    const connector = await insertConnector(t, own, 'webhook-in');
    const childConnector = await insertConnector(t, world.accounts.child, 'webhook-in');
    const [from, to] = ['2026-03-01T00:00:00.000Z', '2026-03-31T00:00:00.000Z'];
    await device(own, 'inside', connector, at('2026-03-15T12:00:00Z'));
    await device(own, 'at-the-start', connector, at(from));
    await device(own, 'before', connector, at('2026-02-27T00:00:00Z'));
    await device(own, 'never', connector, null);
    // Last seen after the range: active only when a stored packet falls inside it.
    await device(own, 'later-and-inside', connector, at('2026-04-10T00:00:00Z'));
    await storePacket(connector, 'later-and-inside', at('2026-03-20T08:00:00Z'));
    await storePacket(connector, 'later-and-inside', at('2026-04-10T00:00:00Z'));
    await device(own, 'later-only', connector, at('2026-04-11T00:00:00Z'));
    await storePacket(connector, 'later-only', at('2026-04-11T00:00:00Z'));
    await storePacket(connector, 'later-only', at('2026-02-01T00:00:00Z'));
    await device(world.accounts.child, 'child-inside', childConnector, at('2026-03-02T00:00:00Z'));

    const range = `from=${from}&to=${to}`;
    expect((await activeCount(`accountId=${own}&${range}`)).count).toBe(3);
    expect((await activeCount(`accountId=${own}&${range}&includeSubAccounts=false`)).count).toBe(3);
    const withSubs = await activeCount(`accountId=${own}&${range}&includeSubAccounts=true`);
    expect(withSubs).toMatchObject({ count: 4, includeSubAccounts: true, from, to });
    expect((await activeCount(`accountId=${world.accounts.child}&${range}`)).count).toBe(1);
    // The parent sees its sub-accounts only when asked to.
    expect((await activeCount(`accountId=${world.accounts.parent}&${range}`)).count).toBe(0);
    expect(
      (await activeCount(`accountId=${world.accounts.parent}&${range}&includeSubAccounts=true`)).count,
    ).toBe(4);
  });

  it('validates the range and keeps other tenants out', async () => {
    for (const query of [
      'from=2026-03-02T00:00:00Z&to=2026-03-01T00:00:00Z',
      'from=2026-03-01T00:00:00Z&to=2026-03-01T00:00:00Z',
      'from=2025-01-01T00:00:00Z&to=2026-03-01T00:00:00Z',
      'from=yesterday',
      'includeSubAccounts=maybe',
    ]) {
      const r = await call('GET', `/xapi/v1/virtual-devices/active-count?${query}`);
      expect(r.statusCode, query).toBe(400);
      expect(errorCode(r)).toBe('VALIDATION_ERROR');
    }
    const own = caller(t, { authorization: world.credentials.bearer.authorization! });
    const sibling = await own(
      'GET',
      `/xapi/v1/virtual-devices/active-count?accountId=${world.accounts.sibling}`,
    );
    expect(sibling.statusCode).toBe(404);
    const twinReader = await userWithPermissions(t, bearer(world.rootToken), 'Twin reader', [
      'digitalTwin.read',
    ]);
    const noPermission = caller(t, bearer(twinReader.token));
    const refused = await noPermission('GET', '/xapi/v1/virtual-devices/active-count');
    expect(refused.statusCode).toBe(403);
  });
});
