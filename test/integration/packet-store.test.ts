import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IncomingPacket } from '../../server/src/ingest/ingest.types.js';
import { spoolPositionKey } from '../../server/src/ingest/packet-store.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { waitFor } from './support/wait.js';

/**
 * The packet path of ADR 0103 through a real server: front door → packet spool (acknowledged once on
 * disk) → the ingest worker's packet store → `packets`, with the spool position committed alongside.
 */

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const packet = (i: number, connectorId = '01a200aa-989b-76c9-840b-4a0dd99a745f'): IncomingPacket => ({
  connectorId,
  deviceKey: `device-${i % 7}`,
  payload: Buffer.from(JSON.stringify({ seq: i })),
  source: 'test',
  receivedAt: new Date(),
});

const query = <T>(app: TestApp, text: string, params: unknown[] = []) =>
  app.orm.em.fork().getConnection().execute<T[]>(text, params);

const rowsOf = (app: TestApp, connectorId: string, expected: number) =>
  waitFor(
    async () => {
      const rows = await query<{
        id: string;
        payload: Buffer;
        device_key: string;
        source: string;
        received_at: Date;
        meta: unknown;
      }>(
        app,
        'SELECT id, payload, device_key, source, received_at, meta FROM packets WHERE connector_id = ? ORDER BY id',
        [connectorId],
      );
      return rows.length >= expected ? rows : undefined;
    },
    20_000,
    { what: `${expected} packets in the table` },
  );

const spoolPosition = async (app: TestApp) =>
  Number(
    (
      await query<{ seq: string }>(app, `SELECT value #>> '{}' AS seq FROM system_settings WHERE key = ?`, [
        spoolPositionKey(app.services.packets.id),
      ])
    )[0]?.seq ?? 0,
  );

describe('packet spool and store', () => {
  it('acknowledges once spooled, then stores every packet in order, in batches, with the spool position', async () => {
    const count = 3000;
    const before = await spoolPosition(t);
    await Promise.all(Array.from({ length: count }, (_, i) => t.services.packets.append(packet(i))));
    // Acknowledged means on disk: the spool files hold every record before the table may.
    const spooled = fs.readdirSync(t.config.spoolDir).filter((f) => f.endsWith('.seg'));
    expect(spooled.length).toBeGreaterThan(0);
    const rows = await rowsOf(t, '01a200aa-989b-76c9-840b-4a0dd99a745f', count);
    expect(rows).toHaveLength(count);
    expect(rows.map((r) => (JSON.parse(r.payload.toString()) as { seq: number }).seq)).toEqual(
      Array.from({ length: count }, (_, i) => i),
    );
    await waitFor(async () => ((await spoolPosition(t)) >= before + count ? true : undefined), 10_000, {
      what: 'the spool position',
    });
    expect(await spoolPosition(t)).toBe(before + count);
    const metrics = await t.app.inject({ url: '/metrics' });
    const batches = /stellwerk_packet_store_batch_size_count\{[^}]*\} (\d+)/.exec(metrics.body);
    expect(Number(batches?.[1])).toBeGreaterThan(0);
    expect(Number(batches?.[1])).toBeLessThan(count);
    const groups = /stellwerk_packet_spool_group_size_count\{[^}]*\} (\d+)/.exec(metrics.body);
    expect(Number(groups?.[1])).toBeGreaterThan(0);
    expect(Number(groups?.[1])).toBeLessThan(count);
  });

  it('names its PostgreSQL connections by role, so pg_stat_activity tells the packet store and the ingest apart', async () => {
    await t.services.packets.append(packet(1, '01a200aa-989b-76c9-840b-4a0dd99a7462'));
    await rowsOf(t, '01a200aa-989b-76c9-840b-4a0dd99a7462', 1);
    const names = await waitFor(async () => {
      const rows = await query<{ name: string }>(
        t,
        `SELECT DISTINCT application_name AS name FROM pg_stat_activity
          WHERE datname = current_database() AND backend_type = 'client backend'`,
      );
      const found = rows.map((r) => r.name);
      return found.includes('stellwerk-ingest') ? found : undefined;
    });
    expect(names).toEqual(
      expect.arrayContaining(['stellwerk', 'stellwerk-packet-store', 'stellwerk-ingest']),
    );
  });

  it('stores every column exactly: odd device keys, binary and empty payloads, millisecond times, metadata', async () => {
    const connectorId = '01a200aa-989b-76c9-840b-4a0dd99a7460';
    const keys = ['a,b', 'quote"d', 'back\\slash', '{brace}', 'spaced key', 'NULL', 'ümlaut-☃', ''];
    const payloads = [Buffer.from([0, 1, 255, 92, 34]), Buffer.alloc(0), Buffer.from('{"x":"\\u0000"}')];
    const sent = keys.map((deviceKey, i) => ({
      connectorId,
      deviceKey,
      payload: payloads[i % payloads.length]!,
      source: i % 2 ? 'webhook' : 'mqtt',
      receivedAt: new Date(1_700_000_000_000 + i * 1001 + 7),
      // Every third packet has none: a batch mixes both.
      ...(i % 3 === 1
        ? {}
        : { meta: { topic: `t/${deviceKey}/"q"\\{x}`, fCnt: i, decoded: { text: 'ä,☃\u0000\ud800' } } }),
    }));
    await Promise.all(sent.map((p) => t.services.packets.append(p)));
    const rows = await rowsOf(t, connectorId, sent.length);
    expect(rows.map((r) => r.device_key)).toEqual(keys);
    expect(rows.map((r) => r.source)).toEqual(sent.map((p) => p.source));
    expect(rows.map((r) => r.payload.toString('hex'))).toEqual(sent.map((p) => p.payload.toString('hex')));
    expect(rows.map((r) => new Date(r.received_at).getTime())).toEqual(
      sent.map((p) => p.receivedAt.getTime()),
    );
    // NUL dropped, a lone surrogate replaced: jsonb refuses both, and with them the packet.
    expect(rows.map((r) => r.meta)).toEqual(
      sent.map((p) => (p.meta ? { ...p.meta, decoded: { text: 'ä,☃\ufffd' } } : null)),
    );
  });

  it('skips, logs and counts a packet the database refuses, and stores the rest of its batch', async () => {
    const connectorId = '01a200aa-989b-76c9-840b-4a0dd99a7461';
    // PostgreSQL text cannot hold NUL: the one packet the table refuses, amid good ones.
    const sent = Array.from({ length: 9 }, (_, i) => ({
      ...packet(i, connectorId),
      deviceKey: i === 4 ? 'bad\u0000key' : `k${i}`,
    }));
    await Promise.all(sent.map((p) => t.services.packets.append(p)));
    const rows = await rowsOf(t, connectorId, 8);
    expect(rows.map((r) => r.device_key)).toEqual(['k0', 'k1', 'k2', 'k3', 'k5', 'k6', 'k7', 'k8']);
    const metrics = await waitFor(async () => {
      const body = (await t.app.inject({ url: '/metrics' })).body;
      return /stellwerk_packets_skipped_total\{[^}]*\} 1\b/.test(body) ? body : undefined;
    });
    expect(metrics).toMatch(/stellwerk_packets_skipped_total/);
  });

  it('refuses packets beyond the outstanding limit instead of growing without bound, and loses none it accepted', async () => {
    const small = await createTestApp({ env: { STELLWERK_INGEST_MAX_PENDING: '100' } });
    try {
      const connectorId = '01a200aa-989b-76c9-840b-4a0dd99a7462';
      const results = await Promise.allSettled(
        Array.from({ length: 1000 }, (_, i) => small.services.packets.append(packet(i, connectorId))),
      );
      const refused = results.filter((r) => r.status === 'rejected');
      expect(refused.length).toBeGreaterThan(0);
      expect(String((refused[0] as PromiseRejectedResult).reason)).toMatch(/INGEST_BUSY|Too many packets/);
      const accepted = results.length - refused.length;
      const rows = await rowsOf(small, connectorId, accepted);
      expect(rows).toHaveLength(accepted);
      // Once the worker caught up the spool accepts again.
      await small.services.packets.append(packet(5000, connectorId));
      await rowsOf(small, connectorId, accepted + 1);
    } finally {
      await small.close();
    }
  });
});
