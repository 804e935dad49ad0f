import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_DEVICE_CACHE, DeviceResolver } from '../../server/src/ingest/resolve-device.stage.js';
import { insertConnector, insertDevice, insertDriver, sql } from './support/ingest-fixtures.js';
import { createTestApp, type TestApp } from './support/test-app.js';

let t: TestApp;
let pool: pg.Pool;
let queries = 0;

beforeAll(async () => {
  t = await createTestApp();
  pool = new pg.Pool({ connectionString: String(t.orm.config.get('clientUrl')), max: 1 });
  // Counts the resolver's round trips to PostgreSQL: what the cache is there to save.
  const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
  (pool as unknown as { query: (...args: unknown[]) => Promise<unknown> }).query = (...args) => {
    queries++;
    return query(...args);
  };
});
afterAll(async () => {
  await pool?.end();
  await t?.close();
});

/** A resolver on a clock the test moves. */
function resolverAt(serveStale: boolean) {
  const clock = { now: 1_000_000 };
  const resolver = new DeviceResolver(pool, { ...DEFAULT_DEVICE_CACHE, serveStale }, () => clock.now);
  return { resolver, clock };
}

const arriving = (connectorId: string, deviceKey: string) => ({
  id: 0n,
  connectorId,
  deviceKey,
  payload: Buffer.from('{}'),
  source: 'test',
  receivedAt: new Date(),
});

async function device(key: string) {
  const connectorId = await insertConnector(t);
  const driverId = await insertDriver(t);
  const id = await insertDevice(t, { connectorId, deviceKey: key, driverId });
  return { connectorId, id, key };
}

const setReferenceId = (id: string, referenceId: string) =>
  sql(t, 'UPDATE virtual_devices SET reference_id = ? WHERE id = ?', [referenceId, id]);

describe('device resolver', () => {
  it('preloads devices by id, so their first packets need no lookup', async () => {
    const d = await device('preloaded-1');
    const { resolver } = resolverAt(false);
    await resolver.preload([d.id]);
    const before = queries;
    const [resolved] = await resolver.resolve([arriving(d.connectorId, d.key)]);
    expect(resolved!.device).toMatchObject({ id: d.id, accountId: t.rootAccountId });
    expect(resolved!.device!.driver?.parser).toEqual({ type: 'json' });
    expect(queries).toBe(before);
  });

  /** A device cached, then changed in the database without an invalidation, and its entry expired. */
  async function changedAfterExpiry(key: string, serveStale: boolean) {
    const d = await device(key);
    const { resolver, clock } = resolverAt(serveStale);
    await resolver.resolve([arriving(d.connectorId, d.key)]);
    await setReferenceId(d.id, `moved-${key}`);
    clock.now += DEFAULT_DEVICE_CACHE.ttlMs + 1;
    return { d, resolver };
  }

  it('looks an expired entry up again before answering, by default', async () => {
    const { d, resolver } = await changedAfterExpiry('expiring-1', false);
    const [resolved] = await resolver.resolve([arriving(d.connectorId, d.key)]);
    expect(resolved!.device!.referenceId).toBe('moved-expiring-1');
  });

  it('with serveStale answers from an expired entry at once and renews it in the background', async () => {
    const { d, resolver } = await changedAfterExpiry('stale-1', true);
    const before = queries;
    const [stale] = await resolver.resolve([arriving(d.connectorId, d.key)]);
    expect(stale!.device!.referenceId).toBeNull();
    await resolver.settled();
    expect(queries).toBe(before + 1);
    const [renewed] = await resolver.resolve([arriving(d.connectorId, d.key)]);
    expect(renewed!.device!.referenceId).toBe('moved-stale-1');
    expect(queries).toBe(before + 1);
  });

  it('never serves an invalidated entry, stale or not', async () => {
    const d = await device('invalidated-1');
    const { resolver } = resolverAt(true);
    await resolver.preload([d.id]);
    await setReferenceId(d.id, 'moved-3');
    resolver.invalidateDevice({ id: d.id });
    const [resolved] = await resolver.resolve([arriving(d.connectorId, d.key)]);
    expect(resolved!.device!.referenceId).toBe('moved-3');
  });

  it('skips ids of devices without an address and unknown ids', async () => {
    const unaddressed = await insertDevice(t, { connectorId: null, deviceKey: 'no-connector' });
    const { resolver } = resolverAt(false);
    await resolver.preload([unaddressed, '00000000-0000-4000-8000-000000000000']);
    expect(resolver.size).toBe(0);
  });
});
