import { createHash } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import { Redis } from 'ioredis';
import pg from 'pg';
import { Connector } from './connector.entity.js';
import type { MqttInConfig } from './kinds/mqtt-in.kind.js';

/**
 * Shared subscriptions on an external broker (ADR 0132).
 *
 * A connector with `sharedGroup` subscribes `$share/<group>/<filter>` through `sharedSlots`
 * persistent MQTT 5 sessions with stable client ids (`<prefix>-<connector>-<slot>`). The broker
 * hands each message to one session of the group and keeps a session's queued and unacknowledged
 * messages while it is offline; Mosquitto 2.0 even keeps giving an offline session its share. So
 * every slot must always be held by some node: in cluster mode a slot is held through a PostgreSQL
 * advisory lock (one connection per node holds all of that node's slots), a node takes one slot of
 * each connector at once and adopts further free slots after a grace period (so nodes that start
 * together spread the slots), and a dead node's slots, freed with its database session, are adopted
 * by a survivor that connects with their client ids and so drains them. A single node holds every
 * slot itself, without locks.
 */

export const DEFAULT_SHARED_SLOTS = 2;
/** How long the broker keeps a slot's session (and its messages) while no node holds it. */
export const SESSION_EXPIRY_SECONDS = 86_400;
const TICK_MS = 2000;
/** A free slot is adopted by a node that already holds one only after this long. */
const ADOPT_GRACE_MS = 4000;
/** Advisory-lock namespace of slot locks ("MQSS"); the second key is the slot's hash. */
const LOCK_CLASS = 0x4d51_5353;
/** How long a stored message's key is remembered for redeliveries (DUP) to be recognised. */
const SEEN_TTL_MS = 15 * 60_000;

export interface SharedSettings {
  group: string;
  slots: number;
}

export function sharedOf(config: MqttInConfig): SharedSettings | undefined {
  const group = config.sharedGroup?.trim();
  return group ? { group, slots: config.sharedSlots ?? DEFAULT_SHARED_SLOTS } : undefined;
}

export function sharedTopics(group: string, topics: string[]): string[] {
  return topics.map((topic) => `$share/${group}/${topic}`);
}

/** A stable client id per slot, so any node can resume (adopt) the slot's session. */
export function slotClientId(connector: Connector, config: MqttInConfig, slot: number): string {
  return `${config.clientId || 'stellwerk'}-${connector.id.replace(/-/g, '').slice(-12)}-${slot}`;
}

function lockKey(connectorId: string, slot: number): number {
  return createHash('sha1').update(`${connectorId}/${slot}`).digest().readUInt32BE(0) & 0x7fff_ffff;
}

/** What the keeper asks of the mqtt-in runtime. */
export interface SlotClients {
  openSlot(connector: Connector, slot: number): void;
  closeSlot(connectorId: string, slot: number): Promise<void>;
}

interface Watched {
  connector: Connector;
  version: string;
  held: Set<number>;
}

/** Cluster mode: which slots of which shared connectors this node holds. */
export class SlotKeeper {
  private client: pg.Client | undefined;
  private readonly watched = new Map<string, Watched>();
  /** When a slot (by lock key) was first seen free, for the adoption grace period. */
  private readonly freeSince = new Map<number, number>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;

  constructor(
    private readonly deps: {
      orm: MikroORM;
      databaseUrl: string;
      clients: SlotClients;
      log: FastifyBaseLogger;
    },
  ) {}

  start(): void {
    this.stopped = false;
    this.poke();
  }

  /** Looks again now (a connector was created or changed on this node). */
  poke(): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.running ??= this.tick()
      .catch((error: unknown) => this.deps.log.warn({ err: error }, 'Shared-subscription slots not checked'))
      .finally(() => {
        this.running = undefined;
        if (!this.stopped) this.timer = setTimeout(() => this.poke(), TICK_MS);
      });
  }

  /** Closes the connector's slots here and frees them; the next look takes them again if wanted. */
  async release(connectorId: string): Promise<void> {
    const w = this.watched.get(connectorId);
    if (!w) return;
    this.watched.delete(connectorId);
    await this.closeAll(connectorId, w);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    for (const [id, w] of this.watched) await this.closeAll(id, w);
    this.watched.clear();
    // Ending the session releases every slot lock.
    await this.client?.end().catch(() => undefined);
    this.client = undefined;
  }

  private async connection(): Promise<pg.Client> {
    if (this.client) return this.client;
    const client = new pg.Client({ connectionString: this.deps.databaseUrl });
    client.on('error', (error) => {
      // The locks went with the session: close this node's slots before another node adopts them.
      this.deps.log.warn({ err: error }, 'Shared-subscription slot locks lost');
      if (this.client === client) this.client = undefined;
      void client.end().catch(() => undefined);
      for (const [id, w] of this.watched) void this.closeAll(id, w);
    });
    await client.connect();
    this.client = client;
    return client;
  }

  private async tick(): Promise<void> {
    const db = await this.connection();
    const connectors = (
      await this.deps.orm.em.fork().find(Connector, { type: 'mqtt-in', active: true })
    ).filter((c) => sharedOf(c.config as unknown as MqttInConfig));
    const current = new Map(connectors.map((c) => [c.id, c]));
    for (const [id, w] of this.watched) {
      const now = current.get(id);
      if (now && versionOf(now) === w.version) continue;
      await this.closeAll(id, w);
      this.watched.delete(id);
    }
    const { rows } = await db.query<{ key: string }>(
      `SELECT objid::bigint AS key FROM pg_locks
        WHERE locktype = 'advisory' AND objsubid = 2 AND granted AND classid = $1::bigint::oid`,
      [LOCK_CLASS],
    );
    const taken = new Set(rows.map((r) => Number(r.key)));
    const now = Date.now();
    for (const connector of connectors) {
      let w = this.watched.get(connector.id);
      if (!w) {
        w = { connector, version: versionOf(connector), held: new Set() };
        this.watched.set(connector.id, w);
      }
      const { slots } = sharedOf(connector.config as unknown as MqttInConfig)!;
      for (let slot = 0; slot < slots; slot++) {
        if (w.held.has(slot)) continue;
        const key = lockKey(connector.id, slot);
        if (taken.has(key)) {
          this.freeSince.delete(key);
          continue;
        }
        const since = this.freeSince.get(key) ?? now;
        this.freeSince.set(key, since);
        if (w.held.size > 0 && now - since < ADOPT_GRACE_MS) continue;
        const { rows: got } = await db.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS ok', [
          LOCK_CLASS,
          key,
        ]);
        if (got[0]?.ok !== true) continue;
        this.freeSince.delete(key);
        w.held.add(slot);
        this.deps.clients.openSlot(connector, slot);
      }
    }
  }

  private async closeAll(connectorId: string, w: Watched): Promise<void> {
    for (const slot of w.held) {
      await this.deps.clients.closeSlot(connectorId, slot);
      await this.client
        ?.query('SELECT pg_advisory_unlock($1, $2)', [LOCK_CLASS, lockKey(connectorId, slot)])
        .catch(() => undefined);
    }
    w.held.clear();
  }
}

/** How many of a device's latest packets a redelivery is compared with. */
const RECENT_PACKETS = 200;

/**
 * A redelivered message (DUP) whose key Redis does not know: stored already if one of the device's
 * latest packets on this connector, received within the remembered window, has the same topic and
 * payload. This covers the node that stored it and died before it remembered the key (the packet
 * table is the durable truth in cluster mode). Redeliveries are rare (a session's in-flight window
 * after a reconnect), so the look-up costs nothing in the steady flow.
 */
export async function storedAlready(
  orm: MikroORM,
  connectorId: string,
  item: { deviceKey: string; payload: Buffer },
  topic: string,
): Promise<boolean> {
  const rows = await orm.em.getConnection().execute<unknown[]>(
    `SELECT 1 FROM (SELECT payload, meta, received_at FROM packets
                     WHERE connector_id = ? AND device_key = ? ORDER BY id DESC LIMIT ${RECENT_PACKETS}) p
      WHERE p.payload = ? AND p.meta ->> 'topic' = ? AND p.received_at > now() - make_interval(secs => ?)
      LIMIT 1`,
    [connectorId, item.deviceKey, item.payload, topic, SEEN_TTL_MS / 1000],
  );
  return rows.length > 0;
}

const COMMIT_WAIT_MS = 30_000;

/**
 * Cluster mode: resolves once the stored packet is committed to `packets`, rejects (no PUBACK, the
 * broker redelivers) when it is not within COMMIT_WAIT_MS. A node's local spool dies with the node;
 * only the shared table survives it, and a survivor's redelivery check looks there.
 */
export async function committed(
  orm: MikroORM,
  connectorId: string,
  item: { deviceKey: string; payload: Buffer },
  receivedAt: Date,
): Promise<void> {
  const deadline = Date.now() + COMMIT_WAIT_MS;
  for (let delay = 5; ; delay = Math.min(delay * 2, 100)) {
    const rows = await orm.em.getConnection().execute<unknown[]>(
      `SELECT 1 FROM (SELECT payload, received_at FROM packets
                       WHERE connector_id = ? AND device_key = ? ORDER BY id DESC LIMIT ${RECENT_PACKETS}) p
        WHERE p.received_at = ? AND p.payload = ? LIMIT 1`,
      [connectorId, item.deviceKey, receivedAt, item.payload],
    );
    if (rows.length > 0) return;
    if (Date.now() > deadline) throw new Error('the packet was not committed in time');
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

function versionOf(connector: Connector): string {
  return `${connector.updatedAt.getTime()}`;
}

/**
 * Recognises a redelivered message (DUP) that a node already stored: after a message is stored its
 * key (connector, client id, MQTT packet id, hash of topic and payload) is kept in Redis for
 * SEEN_TTL_MS; a DUP message whose key is there is acknowledged without storing it again. The
 * packet id is the session's, and a session moves between nodes with its client id, so the key is
 * the same on the node that adopts it.
 */
export class SeenMessages {
  private readonly redis: Redis;

  constructor(
    url: string,
    private readonly log: FastifyBaseLogger,
  ) {
    this.redis = new Redis(url, { maxRetriesPerRequest: 2, lazyConnect: false });
    this.redis.on('error', (error) => log.debug({ err: error }, 'Redis (mqtt-in redeliveries)'));
  }

  static key(connectorId: string, clientId: string, messageId: number, topic: string, payload: Buffer) {
    const hash = createHash('sha1').update(topic).update('\0').update(payload).digest('base64url');
    return `stellwerk:mqtt-in:seen:${connectorId}:${clientId}:${messageId}:${hash}`;
  }

  /**
   * Stores a message unless it is a redelivery whose key is known. The key is remembered after the
   * store and before the PUBACK; for a node dying between the two, `storedAlready` looks in the
   * packet table.
   */
  async once(key: string, dup: boolean, store: () => Promise<void>): Promise<void> {
    if (dup && (await this.redis.exists(key)) === 1) return;
    await store();
    await this.redis
      .set(key, '1', 'PX', SEEN_TTL_MS)
      .catch((error: unknown) =>
        this.log.warn({ err: error }, 'A stored mqtt-in message was not remembered for redeliveries'),
      );
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => undefined);
  }
}
