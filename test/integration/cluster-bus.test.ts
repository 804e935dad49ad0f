import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { ClusterBusMetrics, RedisClusterBus } from '../../server/src/cluster/cluster-bus.js';
import { ClusterInvalidation } from '../../server/src/cluster/cluster-invalidation.js';
import { Metrics } from '../../server/src/platform/metrics.js';
import { startRedis, type Redis } from './support/cluster.js';
import { waitFor } from './support/wait.js';

/** The Redis bus between two "nodes" in one process, against a real redis-server that goes away. */

let redis: Redis | undefined;
const buses: RedisClusterBus[] = [];
afterAll(async () => {
  await Promise.all(buses.map((b) => b.close()));
  await redis?.stop();
});

function node(url: string, nodeId: string) {
  const lines: Array<{ msg: string }> = [];
  const log = pino(
    { level: 'info' },
    { write: (line: string) => lines.push(JSON.parse(line) as { msg: string }) },
  );
  const metrics = new Metrics({}, { processMetrics: false });
  const bus = new RedisClusterBus({ url, nodeId, log, counters: new ClusterBusMetrics(metrics) });
  buses.push(bus);
  return { bus, lines, metrics, invalidation: new ClusterInvalidation(bus) };
}

const value = async (metrics: Metrics, name: string) =>
  (await metrics.registry.getSingleMetric(name)!.get()).values.reduce((sum, v) => sum + v.value, 0);

describe('the Redis cluster bus', () => {
  it('delivers to the other node only, without echo, and drops caches after Redis came back', async () => {
    redis = await startRedis();
    const a = node(redis.url, 'node-a');
    const b = node(redis.url, 'node-b');
    await Promise.all([a.bus.start(), b.bus.start()]);

    const appliedOnA: unknown[] = [];
    const appliedOnB: unknown[] = [];
    let droppedOnB = 0;
    // Both apply by announcing again, as a local listener would: the echo guard must hold.
    const announceA = a.invalidation.register<string>('devices', {
      apply: (id) => {
        appliedOnA.push(id);
        announceA(id);
      },
    });
    const announceB = b.invalidation.register<string>('devices', {
      apply: (id) => {
        appliedOnB.push(id);
        announceB(id);
      },
      dropAll: () => droppedOnB++,
    });
    b.bus.onReconnect(() => b.invalidation.dropAll());

    announceA('device-1');
    await waitFor(async () => (appliedOnB.length > 0 ? true : undefined), 5000, { what: 'delivery to b' });
    await new Promise((r) => setTimeout(r, 200));
    expect(appliedOnB).toEqual(['device-1']);
    expect(appliedOnA).toEqual([]);
    expect(await value(b.metrics, 'stellwerk_cluster_bus_received_total')).toBe(1);

    // Redis goes away: publishing is dropped and counted, the outage logged once per node.
    const port = redis.port;
    await redis.stop();
    await waitFor(async () =>
      (await value(b.metrics, 'stellwerk_cluster_bus_connected')) === 0 ? true : undefined,
    );
    await new Promise((r) => setTimeout(r, 500));
    announceA('device-2');
    expect(await value(a.metrics, 'stellwerk_cluster_bus_dropped_total')).toBe(1);
    expect(b.lines.filter((l) => l.msg.includes('lost the connection')).length).toBe(1);
    expect(await value(b.metrics, 'stellwerk_cluster_bus_disconnects_total')).toBe(1);

    // Back: b forgets everything (it may have missed invalidations) and hears a again.
    redis = await startRedis(port);
    await waitFor(async () => (droppedOnB > 0 ? true : undefined), 10_000, {
      what: 'the drop-all on reconnect',
    });
    await waitFor(async () =>
      (await value(a.metrics, 'stellwerk_cluster_bus_connected')) === 1 ? true : undefined,
    );
    announceA('device-3');
    await waitFor(async () => (appliedOnB.includes('device-3') ? true : undefined), 5000, {
      what: 'delivery after',
    });
    expect(appliedOnB).toEqual(['device-1', 'device-3']);
  });
});
