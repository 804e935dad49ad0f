import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import mqemitterRedis from 'mqemitter-redis';
import aedesPersistenceRedis from 'aedes-persistence-redis';
import { reconnectDelayMs } from './cluster-bus.js';

/** What Aedes takes to span nodes: its message emitter and its session/retained-message store. */
export interface BrokerBackends {
  mq: unknown;
  persistence: unknown;
  /** After Aedes closed (which closes `mq`): ends the persistence's connection. */
  close(): Promise<void>;
}

/**
 * The embedded broker across a cluster (ADR 0131): messages published through Aedes on one node
 * reach subscribers on every node (mqemitter-redis), and sessions, subscriptions, QoS 1 in-flight
 * and retained messages live in Redis (aedes-persistence-redis), so a persistent session resumes on
 * any node. Aedes announces each new client on `$SYS/<broker>/new/clients` through the emitter; every
 * other node closes its own client of that id, which makes client-id takeover cluster-wide.
 * Device uplinks never pass Aedes' publish (BrokerService.skipUndeliverableUplinks), so they never
 * cross Redis.
 */
export function redisBrokerBackends(url: string): BrokerBackends {
  const options = { retryStrategy: reconnectDelayMs, maxRetriesPerRequest: null };
  const mq = mqemitterRedis({ pubConn: new Redis(url, options), subConn: new Redis(url, options) });
  const conn = new Redis(url, options);
  const persistence = aedesPersistenceRedis({ conn }) as { destroy(cb: () => void): void };
  return {
    mq,
    persistence,
    // Bounded: the persistence waits for its setup before destroying, which never comes if Aedes never listened.
    close: () =>
      Promise.race([
        new Promise<void>((resolve) => persistence.destroy(() => resolve())),
        sleep(2000),
      ]).finally(() => conn.disconnect()),
  };
}
