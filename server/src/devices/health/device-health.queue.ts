import type { MikroORM } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import type { Lifecycle } from '../../platform/lifecycle.js';
import type { Metrics } from '../../platform/metrics.js';
import { HEALTH_UNKNOWN } from '../virtual-device.entity.js';
import type { DeviceHealthEvaluator } from './device-health.evaluator.js';

/**
 * Prompt health for devices still `Unknown`: the ingest pipeline's processed listener offers the
 * ids of devices that just got committed packets (`offer`: set inserts only, never a query, so
 * ingestion never waits); a timer off the ingest path drains the set, keeps the devices whose
 * health is still Unknown and evaluates them (docs/device-health.md).
 *
 * Bounded: at most MAX_PENDING ids wait (more are dropped and counted; a dropped device is
 * evaluated in its daily slot); ids known to be evaluated are remembered (up to MAX_SETTLED, then
 * forgotten at once) so a busy device costs one set lookup per packet.
 */

const MAX_PENDING = 10_000;
const MAX_SETTLED = 200_000;
const MAX_PER_DRAIN = 1_000;

export class DeviceHealthQueue implements Lifecycle {
  readonly name = 'device-health-queue';
  private readonly pending = new Set<string>();
  private readonly settled = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private draining: Promise<void> | undefined;
  private readonly dropped;

  constructor(
    private readonly deps: {
      orm: MikroORM;
      evaluator: DeviceHealthEvaluator;
      clock: () => Date;
      log: FastifyBaseLogger;
      metrics: Metrics;
      tickMs?: number;
    },
  ) {
    this.dropped = deps.metrics.counter(
      'stellwerk_device_health_prompt_dropped_total',
      'Devices not queued for a prompt health evaluation because the queue was full',
    );
  }

  /** For the ingest pipeline's processed listener: cheap, synchronous, never throws. */
  readonly offer = (deviceIds: Iterable<string>): void => {
    for (const id of deviceIds) {
      if (this.settled.has(id) || this.pending.has(id)) continue;
      if (this.pending.size >= MAX_PENDING) {
        this.dropped.inc();
        continue;
      }
      this.pending.add(id);
    }
  };

  get size(): number {
    return this.pending.size;
  }

  async start(): Promise<void> {
    this.timer ??= setInterval(() => void this.drain(), this.deps.tickMs ?? 500);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.draining;
  }

  /** Evaluates the queued devices that are still Unknown; one drain at a time. */
  async drain(): Promise<void> {
    if (this.draining) return this.draining;
    this.draining = this.drainOnce()
      .catch((error: unknown) =>
        this.deps.log.warn({ err: error }, 'device health: prompt evaluation failed'),
      )
      .finally(() => (this.draining = undefined));
    return this.draining;
  }

  private async drainOnce(): Promise<void> {
    while (this.pending.size > 0) {
      const ids = [...this.pending].slice(0, MAX_PER_DRAIN);
      for (const id of ids) this.pending.delete(id);
      const unknown = await this.deps.orm.em
        .fork()
        .getConnection()
        .execute<Array<{ id: string }>>(
          `SELECT id FROM virtual_devices WHERE id IN (?) AND last_seen IS NOT NULL AND health_state = ?`,
          [ids, HEALTH_UNKNOWN],
        );
      const wanted = new Set(unknown.map((r) => r.id));
      const outcomes = await this.deps.evaluator.evaluate([...wanted], this.deps.clock(), false);
      if (this.settled.size + ids.length > MAX_SETTLED) this.settled.clear();
      // Devices whose health is known now (or already was) need no more look-ups per packet.
      for (const id of ids) if (!wanted.has(id)) this.settled.add(id);
      for (const o of outcomes) if (o.state !== HEALTH_UNKNOWN) this.settled.add(o.deviceId);
    }
  }
}
