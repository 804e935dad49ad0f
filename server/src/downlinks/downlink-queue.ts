import type { FastifyBaseLogger } from 'fastify';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { ConnectorKinds } from '../connectors/kinds/index.js';
import { DeliveryError } from '../outgoing/delivery.js';
import type { Lifecycle } from '../platform/lifecycle.js';
import { Downlink } from './downlink.entity.js';

/**
 * Hands queued downlinks to their connector's kind (`runtime.downlink`).
 *
 * - Due items (`status = queued`, `next_attempt_at <= now`) are claimed with FOR UPDATE SKIP LOCKED
 *   and their next attempt is pushed a lease ahead first, so two nodes never send one item and an
 *   item whose node died mid-send is tried again after the lease. The table is the queue: queued
 *   items survive a restart and are picked up again.
 * - Transient failures (network, timeouts, 408, 429, 5xx, broker not connected) are retried with
 *   doubling backoff; after MAX_ATTEMPTS, or at once for final failures (other 4xx, a refused
 *   target, missing settings), the item is `failed` with the reason.
 * - Handed over: `sent` when the kind says so (the broker published it), else it stays `queued`
 *   until the network server's events move it on (downlink.service.ts applyEvent).
 * - Order: items are tried oldest first; a retried item does not hold back later ones of its device.
 */

export interface DownlinkQueueOptions {
  pollMs?: number;
  retryBaseMs?: number;
  maxAttempts?: number;
}

const LEASE_MS = 60_000;
const MAX_BACKOFF_MS = 10 * 60_000;
const BATCH = 20;

export class DownlinkQueue implements Lifecycle {
  readonly name = 'downlink-queue';
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = true;
  private readonly pollMs: number;
  private readonly retryBaseMs: number;
  private readonly maxAttempts: number;

  constructor(
    private readonly deps: {
      orm: MikroORM;
      kinds: ConnectorKinds;
      clock: () => Date;
      log: FastifyBaseLogger;
    },
    options: DownlinkQueueOptions = {},
  ) {
    this.pollMs = options.pollMs ?? 2_000;
    this.retryBaseMs = options.retryBaseMs ?? 1_000;
    this.maxAttempts = options.maxAttempts ?? 10;
  }

  async start(): Promise<void> {
    this.stopped = false;
    this.wake();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /** Looks for due items now (a downlink was queued). */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.running = this.drain().finally(() => {
      this.running = null;
      if (this.stopped) return;
      if (this.again) {
        this.again = false;
        this.wake();
      } else {
        this.timer = setTimeout(() => this.wake(), this.pollMs);
      }
    });
  }

  private async drain(): Promise<void> {
    try {
      for (let round = 0; round < 50 && !this.stopped; round++) {
        const ids = await this.claim();
        for (const id of ids) await this.deliver(id);
        if (ids.length < BATCH) return;
      }
    } catch (error) {
      this.deps.log.warn({ err: error }, 'The downlink queue could not be worked; trying again shortly');
    }
  }

  private async claim(): Promise<string[]> {
    const now = this.deps.clock();
    const rows = await this.deps.orm.em
      .fork()
      .getConnection()
      .execute<Array<{ id: string }>>(
        `UPDATE downlinks SET next_attempt_at = ?, attempts = attempts + 1
          WHERE id IN (SELECT id FROM downlinks WHERE status = 'queued' AND next_attempt_at <= ?
                        ORDER BY next_attempt_at, created_at LIMIT ? FOR UPDATE SKIP LOCKED)
          RETURNING id`,
        [new Date(now.getTime() + LEASE_MS), now, BATCH],
      );
    return rows.map((r) => r.id);
  }

  private async deliver(id: string): Promise<void> {
    const em: EntityManager = this.deps.orm.em.fork();
    const downlink = await em.findOne(Downlink, { id }, { populate: ['connector', 'device'] });
    if (!downlink || downlink.status !== 'queued') return;
    const { connector, device } = downlink;
    try {
      const sender = this.deps.kinds.get(connector.type)?.downlink;
      if (!sender) throw new DeliveryError(`A ${connector.type} connector does not deliver downlinks`, false);
      if (!connector.active) throw new DeliveryError('The connector is inactive', true, 'CONNECTOR_INACTIVE');
      const result = await sender.send(connector, {
        id: downlink.id,
        device: {
          id: device.id,
          deviceKey: downlink.deviceKey,
          devEui: device.devEui,
          endDeviceId: device.endDeviceId,
        },
        fPort: downlink.fPort,
        bytes: downlink.payload,
        confirmed: downlink.confirmed,
      });
      const now = this.deps.clock();
      // An event may have moved it on meanwhile (a fast network server): never step back.
      await em.refresh(downlink);
      downlink.handedOverAt ??= now;
      downlink.nextAttemptAt = null;
      downlink.error = null;
      if (result.remoteId) downlink.remoteId ??= result.remoteId;
      if (result.status === 'sent' && downlink.status === 'queued') {
        downlink.status = 'sent';
        downlink.sentAt = now;
      }
    } catch (error) {
      this.failed(downlink, error);
    }
    await em.flush();
  }

  private failed(downlink: Downlink, error: unknown): void {
    const retryable = error instanceof DeliveryError ? error.retryable : true;
    const message = (error instanceof Error ? error.message : String(error)).slice(0, 900);
    if (!(error instanceof DeliveryError)) {
      this.deps.log.warn({ err: error, downlinkId: downlink.id }, 'A downlink could not be handed over');
    }
    if (retryable && downlink.attempts < this.maxAttempts) {
      const delay = Math.min(this.retryBaseMs * 2 ** (downlink.attempts - 1), MAX_BACKOFF_MS);
      downlink.nextAttemptAt = new Date(this.deps.clock().getTime() + delay);
      downlink.error = message;
      return;
    }
    downlink.status = 'failed';
    downlink.nextAttemptAt = null;
    downlink.error = retryable ? `Gave up after ${downlink.attempts} attempts: ${message}` : message;
  }
}
