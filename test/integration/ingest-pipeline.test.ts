import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IngestPipeline } from '../../server/src/ingest/pipeline.js';
import type { StateUpdate } from '../../server/src/ingest/parse-packet.stage.js';
import { PacketStore, spoolPositionKey } from '../../server/src/ingest/packet-store.js';
import { Metrics } from '../../server/src/platform/metrics.js';
import {
  insertConnector,
  insertDevice,
  insertDriver,
  packet,
  processedPackets,
  sql,
  statesOf,
} from './support/ingest-fixtures.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { waitFor } from './support/wait.js';

let t: TestApp;
let driverId: string;
const updates: StateUpdate[] = [];

beforeAll(async () => {
  t = await createTestApp();
  driverId = await insertDriver(t);
  t.services.ingest.onProcessed((u) => updates.push(...u));
});
afterAll(() => t?.close());

const append = (connectorId: string, deviceKey: string, payload: unknown) =>
  t.services.packets.append(packet(connectorId, deviceKey, payload));

const cursor = async () =>
  (
    await sql<{ v: string }>(t, `SELECT value #>> '{}' AS v FROM system_settings WHERE key = 'ingest_cursor'`)
  )[0]?.v;

/** The connector's failed count; counted once a batch has committed, so it may trail the packet rows. */
const failedCount = async (connectorId: string) => {
  await t.services.connectorTelemetry.flush();
  const [row] = await sql<{ packets_failed: string }>(
    t,
    'SELECT packets_failed FROM connectors WHERE id = ?',
    [connectorId],
  );
  return Number(row!.packets_failed);
};

describe('ingest pipeline', () => {
  it('parses with the driver into _raw, _parsed and one state per key, sets lastSeen and advances the cursor', async () => {
    const connectorId = await insertConnector(t);
    const deviceId = await insertDevice(t, { connectorId, deviceKey: 'meter-1', driverId });
    await append(connectorId, 'meter-1', { temperature: 21.5, on: true, label: 'Kessel "A"' });
    const [row] = await processedPackets(t, connectorId, 1);
    // A parsed packet is not written twice: its status follows from the cursor.
    expect(row).toMatchObject({ status: 'parsed', error: null });
    expect(await statesOf(t, deviceId)).toEqual({
      _raw: '{"temperature":21.5,"on":true,"label":"Kessel \\"A\\""}',
      _parsed: { temperature: 21.5, on: true, label: 'Kessel "A"' },
      temperature: 21.5,
      on: true,
      label: 'Kessel "A"',
    });
    const [device] = await sql<{ last_seen: string | null }>(
      t,
      'SELECT last_seen FROM virtual_devices WHERE id = ?',
      [deviceId],
    );
    expect(Date.now() - new Date(device!.last_seen!).getTime()).toBeLessThan(60_000);
    expect(BigInt((await cursor())!)).toBeGreaterThanOrEqual(BigInt(row!.id));
    // Listeners run after the commit, so they may trail the rows by a moment.
    await expect
      .poll(() => updates.find((u) => u.deviceId === deviceId)?.states)
      .toMatchObject({ temperature: 21.5 });
  });

  it('makes a packet visible before its states commit and writes a parsed packet only once', async () => {
    const connectorId = await insertConnector(t);
    const deviceId = await insertDevice(t, { connectorId, deviceKey: 'early-1', driverId });
    // The first packet fills the device cache; the second is resolved and parsed without the database.
    await append(connectorId, 'early-1', { step: 1 });
    await processedPackets(t, connectorId, 1);
    const events: string[] = [];
    t.services.ingest.onVisible((visible) => {
      if (visible.some((u) => u.deviceId === deviceId && u.states.step === 2)) events.push('visible');
    });
    t.services.ingest.onProcessed((processed) => {
      if (processed.some((u) => u.deviceId === deviceId && u.states.step === 2)) events.push('committed');
    });
    // Shown on arrival, while its record is being synced (ADR 0104); acknowledged once spooled (ADR
    // 0103); its states commit after both. Which of the first two comes first is up to the disk.
    await append(connectorId, 'early-1', { step: 2 }).then(() => events.push('acknowledged'));
    await waitFor(async () => (events.includes('committed') ? true : undefined));
    expect([...events].sort()).toEqual(['acknowledged', 'committed', 'visible']);
    expect(events.at(-1)).toBe('committed');
    const rows = await processedPackets(t, connectorId, 2);
    expect(rows.map((r) => r.status)).toEqual(['parsed', 'parsed']);
    // Derived from the cursor: the row itself was never updated.
    const raw = await sql<{ status: string | null; device_uuid: string | null }>(
      t,
      'SELECT status, device_uuid FROM packets WHERE connector_id = ?',
      [connectorId],
    );
    expect(raw).toEqual([
      { status: null, device_uuid: null },
      { status: null, device_uuid: null },
    ]);
    await expect.poll(async () => (await statesOf(t, deviceId)).step).toBe(2);
  });

  it('keeps only _raw for a device without a driver; binary payloads as base64', async () => {
    const connectorId = await insertConnector(t);
    const deviceId = await insertDevice(t, { connectorId, deviceKey: 'raw-1' });
    const bytes = Buffer.from([0x00, 0xff, 0x10, 0x80]);
    await append(connectorId, 'raw-1', bytes);
    await processedPackets(t, connectorId, 1);
    expect(await statesOf(t, deviceId)).toEqual({ _raw: bytes.toString('base64') });
  });

  it('turns a JSON array into one update per item, in order; the last item is the current value', async () => {
    const connectorId = await insertConnector(t);
    const deviceId = await insertDevice(t, { connectorId, deviceKey: 'array-1', driverId });
    const items = [{ n: 1, a: 'x' }, { n: 2 }, { n: 3, b: true }];
    await append(connectorId, 'array-1', items);
    await processedPackets(t, connectorId, 1);
    await expect.poll(() => updates.filter((u) => u.deviceId === deviceId).length).toBe(items.length);
    const mine = updates.filter((u) => u.deviceId === deviceId);
    expect(mine.map((u) => u.states._parsed)).toEqual(items);
    expect(mine[0]!.states._raw).toBe(JSON.stringify(items));
    expect(await statesOf(t, deviceId)).toMatchObject({ _parsed: { n: 3, b: true }, n: 3, a: 'x', b: true });
  });

  it('marks parse errors, keeps _raw, counts the failure and logs it on the connector', async () => {
    const connectorId = await insertConnector(t);
    const deviceId = await insertDevice(t, { connectorId, deviceKey: 'broken-1', driverId });
    await append(connectorId, 'broken-1', Buffer.from('{"temperature": 2'));
    const [row] = await processedPackets(t, connectorId, 1);
    expect(row!.status).toBe('parse-error');
    expect(row!.error).toMatch(/JSON/);
    expect(await statesOf(t, deviceId)).toEqual({ _raw: '{"temperature": 2' });
    await expect.poll(() => failedCount(connectorId)).toBe(1);
  });

  it('marks packets of unknown devices, counts them as failed and logs them at most once a minute', async () => {
    const connectorId = await insertConnector(t);
    for (let i = 0; i < 5; i++) await append(connectorId, 'ghost', { i });
    const rows = await processedPackets(t, connectorId, 5);
    expect(rows.map((r) => r.status)).toEqual(Array(5).fill('unknown-device'));
    await expect.poll(() => failedCount(connectorId)).toBe(5);
    await expect
      .poll(() =>
        sql<{ message: string }>(t, 'SELECT message FROM connector_logs WHERE connector_id = ?', [
          connectorId,
        ]),
      )
      .toHaveLength(1);
    const [log] = await sql<{ message: string }>(
      t,
      'SELECT message FROM connector_logs WHERE connector_id = ?',
      [connectorId],
    );
    expect(log!.message).toMatch(/unknown device_id "ghost"/);
  });

  it('finds a device registered after its first packet once the devices domain invalidates the cache', async () => {
    const connectorId = await insertConnector(t);
    await append(connectorId, 'late', { v: 1 });
    await processedPackets(t, connectorId, 1);
    const deviceId = await insertDevice(t, { connectorId, deviceKey: 'late', driverId });
    t.services.ingest.invalidateDevice({ connectorId, deviceKey: 'late' });
    await append(connectorId, 'late', { v: 2 });
    const rows = await processedPackets(t, connectorId, 2);
    expect(rows.map((r) => r.status)).toEqual(['unknown-device', 'parsed']);
    expect(await statesOf(t, deviceId)).toMatchObject({ v: 2 });
  });

  it('runs in a worker thread that, when it dies, is restarted and processes what came meanwhile', async () => {
    const connectorId = await insertConnector(t);
    const deviceId = await insertDevice(t, { connectorId, deviceKey: 'worker-1', driverId });
    await append(connectorId, 'worker-1', { step: 1 });
    await processedPackets(t, connectorId, 1);
    // ADR 0102: the pipeline's thread; terminating it stands in for a crash of that thread.
    const worker = (t.services.ingest as unknown as { worker: { terminate(): Promise<number> } }).worker;
    await worker.terminate();
    for (let step = 2; step <= 4; step++) await append(connectorId, 'worker-1', { step });
    const rows = await processedPackets(t, connectorId, 4, 20_000);
    expect(rows.map((r) => r.status)).toEqual(['parsed', 'parsed', 'parsed', 'parsed']);
    expect(await statesOf(t, deviceId)).toMatchObject({ step: 4 });
  });

  it('processes thousands of packets in batches with every device ending at its newest value', async () => {
    const connectorId = await insertConnector(t);
    const devices = await Promise.all(
      Array.from({ length: 50 }, (_, d) =>
        insertDevice(t, { connectorId, deviceKey: `bulk-${d}`, driverId }),
      ),
    );
    const count = 5000;
    const before = await batchCount();
    await Promise.all(
      Array.from({ length: count }, (_, i) => append(connectorId, `bulk-${i % 50}`, { seq: i })),
    );
    const rows = await processedPackets(t, connectorId, count, 30_000);
    expect(rows.every((r) => r.status === 'parsed')).toBe(true);
    for (const [d, id] of devices.entries()) expect((await statesOf(t, id)).seq).toBe(count - 50 + d);
    expect((await batchCount()) - before).toBeLessThan(count / 5);
  });

  it('replays committed but unprocessed packets at start, and a replay never moves a state backwards', async () => {
    const connectorId = await insertConnector(t);
    const deviceId = await insertDevice(t, { connectorId, deviceKey: 'replay-1', driverId });
    // A second store + pipeline on the same database stands in for a process that died after commit.
    // A position key of its own: these packets do not move the server's spool position.
    const url = String(t.orm.config.get('clientUrl'));
    const store = new PacketStore(url, spoolPositionKey('replaying-test-node'), new Metrics());
    const noReports = { record: () => {}, write: async () => {} };
    for (let i = 1; i <= 3; i++)
      store.appendSpooled([{ ...packet(connectorId, 'replay-1', { step: i }), seq: 0 }]);
    await store.flushed();
    const pending = await sql<{ status: string | null }>(
      t,
      'SELECT status FROM packets WHERE connector_id = ?',
      [connectorId],
    );
    expect(pending.map((r) => r.status)).toEqual([null, null, null]);
    await t.services.ingest.stop();
    // Roll the cursor back below the first packet, as if the last commits never happened.
    const [first] = await sql<{ id: string }>(t, 'SELECT min(id) AS id FROM packets WHERE connector_id = ?', [
      connectorId,
    ]);
    await sql(t, `UPDATE system_settings SET value = to_jsonb(?::text) WHERE key = 'ingest_cursor'`, [
      String(BigInt(first!.id) - 1n),
    ]);
    const replaying = new IngestPipeline({
      databaseUrl: url,
      packets: store,
      parsing: t.services.driverParsing,
      connectors: noReports,
      metrics: new Metrics(),
      log: t.app.log,
    });
    try {
      await replaying.start();
      await processedPackets(t, connectorId, 3);
      expect(await statesOf(t, deviceId)).toMatchObject({ step: 3 });
      // Replaying an older packet again (status reset) must not overwrite the newer value.
      await sql(t, `UPDATE packets SET status = NULL WHERE id = ?`, [first!.id]);
      await sql(t, `UPDATE system_settings SET value = to_jsonb(?::text) WHERE key = 'ingest_cursor'`, [
        String(BigInt(first!.id) - 1n),
      ]);
      await replaying.stop();
      const again = new IngestPipeline({
        databaseUrl: url,
        packets: store,
        parsing: t.services.driverParsing,
        connectors: noReports,
        metrics: new Metrics(),
        log: t.app.log,
      });
      await again.start();
      await processedPackets(t, connectorId, 3);
      await again.stop();
      expect(await statesOf(t, deviceId)).toMatchObject({ step: 3 });
    } finally {
      await replaying.stop();
      await store.stop();
    }
  });
});

async function batchCount(): Promise<number> {
  const metrics = await t.app.inject({ url: '/metrics' });
  return Number(/stellwerk_ingest_batch_seconds_count\{[^}]*\} (\d+)/.exec(metrics.body)?.[1] ?? 0);
}
