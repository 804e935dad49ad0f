import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DriverParsing } from '../../server/src/drivers/driver-parsing.service.js';
import type { DriverParsing as Parsing } from '../../server/src/ingest/driver-parsing.js';
import { IngestPipeline } from '../../server/src/ingest/pipeline.js';
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

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
  // This file's pipelines process the packets; the app's own would take them first.
  await t.services.ingest.stop();
});
afterAll(() => t?.close());

const BATCH = 10;
const PACKETS = 5 * BATCH;

/** Resolves once the parser has seen a packet with `n` at or above the given one (or never). */
class WatchedParsing implements Parsing {
  private readonly real = new DriverParsing();
  private highest = 0;
  private readonly waiters: Array<{ n: number; resolve: () => void }> = [];

  readonly parse: Parsing['parse'] = async (driver, payload, meta) => {
    const n = Number((JSON.parse(payload.toString()) as { n: number }).n);
    this.highest = Math.max(this.highest, n);
    for (const w of this.waiters.filter((w) => w.n <= this.highest)) w.resolve();
    return this.real.parse(driver, payload, meta);
  };

  seen(n: number, timeoutMs: number): Promise<boolean> {
    if (this.highest >= n) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.waiters.push({ n, resolve: () => (clearTimeout(timer), resolve(true)) });
    });
  }
}

describe('ingest pipeline with a backlog', () => {
  it('parses the next full batch while the batch before it commits, and commits them in order', async () => {
    const connectorId = await insertConnector(t);
    const driverId = await insertDriver(t);
    const deviceId = await insertDevice(t, { connectorId, deviceKey: 'backlog-1', driverId });
    const url = String(t.orm.config.get('clientUrl'));
    const store = new PacketStore(url, spoolPositionKey('backlog-test-node'), new Metrics());
    // The backlog is in the table before the pipeline starts: it reads full batches from there.
    for (let n = 1; n <= PACKETS; n++)
      store.appendSpooled([{ ...packet(connectorId, 'backlog-1', { n, level: n * 10 }), seq: 0 }]);
    await store.flushed();

    const parsing = new WatchedParsing();
    // Per commit: the batch's last packet, and whether the next batch was parsed before it committed.
    const commits: Array<{ last: number; nextParsedMeanwhile: boolean }> = [];
    const pipeline = new IngestPipeline({
      databaseUrl: url,
      packets: store,
      parsing,
      connectors: { record: () => {}, write: async () => {} },
      metrics: new Metrics(),
      log: t.app.log,
      batchSize: BATCH,
      maxBatchSize: BATCH,
      commitHook: async (_client, outcomes) => {
        const last = Number((JSON.parse(outcomes.at(-1)!.packet.payload.toString()) as { n: number }).n);
        const nextParsedMeanwhile = last < PACKETS ? await parsing.seen(last + 1, 5_000) : false;
        commits.push({ last, nextParsedMeanwhile });
        return undefined;
      },
    });
    try {
      await pipeline.start();
      await processedPackets(t, connectorId, PACKETS);
      // Ten packets a batch, in order, each batch's successor parsed while it committed.
      expect(commits.map((c) => c.last)).toEqual([10, 20, 30, 40, 50]);
      expect(commits.slice(0, -1).every((c) => c.nextParsedMeanwhile)).toBe(true);
      expect(await statesOf(t, deviceId)).toMatchObject({ n: PACKETS, level: PACKETS * 10 });
      const [row] = await sql<{ v: string }>(
        t,
        `SELECT value #>> '{}' AS v FROM system_settings WHERE key = 'ingest_cursor'`,
      );
      const [newest] = await sql<{ id: string }>(
        t,
        'SELECT max(id) AS id FROM packets WHERE connector_id = ?',
        [connectorId],
      );
      expect(row!.v).toBe(newest!.id);
    } finally {
      await pipeline.stop();
      await store.stop();
    }
  });
});
