import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IncomingPacket } from '../../server/src/ingest/ingest.types.js';
import type { StoredPacket } from '../../server/src/ingest/packet-store.js';
import { createTestApp, type TestApp } from './support/test-app.js';

let t: TestApp;
const seen: StoredPacket[] = [];

beforeAll(async () => {
  t = await createTestApp();
  t.services.packets.onStored((packets) => seen.push(...packets));
});
afterAll(() => t.close());

const packet = (i: number): IncomingPacket => ({
  connectorId: '01a200aa-989b-76c9-840b-4a0dd99a745f',
  deviceKey: `device-${i % 7}`,
  payload: Buffer.from(JSON.stringify({ seq: i })),
  source: 'test',
  receivedAt: new Date(),
});

describe('packet store', () => {
  it('commits every appended packet before resolving, in batches, in order', async () => {
    const count = 3000;
    await Promise.all(Array.from({ length: count }, (_, i) => t.services.packets.append(packet(i))));
    const rows = await t.orm.em
      .fork()
      .getConnection()
      .execute<Array<{ id: string; payload: Buffer }>>('SELECT id, payload FROM packets ORDER BY id');
    expect(rows).toHaveLength(count);
    expect(rows.map((r) => (JSON.parse(r.payload.toString()) as { seq: number }).seq)).toEqual(
      Array.from({ length: count }, (_, i) => i),
    );
    // Listeners get the committed packets with the ids the database gave them.
    expect(seen).toHaveLength(count);
    expect(seen.map((p) => String(p.id))).toEqual(rows.map((r) => r.id));
    const metrics = await t.app.inject({ url: '/metrics' });
    const batches = /stellwerk_packet_store_batch_size_count\{[^}]*\} (\d+)/.exec(metrics.body);
    expect(Number(batches?.[1])).toBeLessThan(count);
  });

  it('stores every column exactly: odd device keys, binary and empty payloads, millisecond times', async () => {
    const keys = ['a,b', 'quote"d', 'back\\slash', '{brace}', 'spaced key', 'NULL', 'ümlaut-☃', ''];
    const payloads = [Buffer.from([0, 1, 255, 92, 34]), Buffer.alloc(0), Buffer.from('{"x":"\\u0000"}')];
    const sent = keys.map((deviceKey, i) => ({
      connectorId: '01a200aa-989b-76c9-840b-4a0dd99a7460',
      deviceKey,
      payload: payloads[i % payloads.length]!,
      source: i % 2 ? 'webhook' : 'mqtt',
      receivedAt: new Date(1_700_000_000_000 + i * 1001 + 7),
    }));
    await Promise.all(sent.map((p) => t.services.packets.append(p)));
    const rows = await t.orm.em
      .fork()
      .getConnection()
      .execute<Array<{ device_key: string; payload: Buffer; source: string; received_at: string | Date }>>(
        `SELECT device_key, payload, source, received_at FROM packets
          WHERE connector_id = '01a200aa-989b-76c9-840b-4a0dd99a7460' ORDER BY id`,
      );
    expect(rows.map((r) => r.device_key)).toEqual(keys);
    expect(rows.map((r) => r.source)).toEqual(sent.map((p) => p.source));
    expect(rows.map((r) => r.payload.toString('hex'))).toEqual(sent.map((p) => p.payload.toString('hex')));
    expect(rows.map((r) => new Date(r.received_at).getTime())).toEqual(
      sent.map((p) => p.receivedAt.getTime()),
    );
  });

  it('refuses packets beyond the pending limit instead of growing without bound', async () => {
    const small = await createTestApp({ env: { STELLWERK_INGEST_MAX_PENDING: '100' } });
    try {
      const results = await Promise.allSettled(
        Array.from({ length: 1000 }, (_, i) => small.services.packets.append(packet(i))),
      );
      const refused = results.filter((r) => r.status === 'rejected');
      expect(refused.length).toBeGreaterThan(0);
      expect(String((refused[0] as PromiseRejectedResult).reason)).toMatch(/INGEST_BUSY|Too many packets/);
      const stored = await small.orm.em
        .fork()
        .getConnection()
        .execute<Array<{ n: string }>>('SELECT count(*) AS n FROM packets');
      expect(Number(stored[0]!.n)).toBe(results.length - refused.length);
    } finally {
      await small.close();
    }
  });
});
