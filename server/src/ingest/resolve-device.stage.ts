import type pg from 'pg';
import type { DriverRef } from './driver-parsing.js';
import type { StoredPacket } from './packet-store.js';

/**
 * Stage 1: which device sent each packet, by (connectorId, deviceKey).
 *
 * Failure behaviour: a database error rejects the whole call (the pipeline retries the batch);
 * a packet without a registered device resolves to `null` (status `unknown-device` later).
 * Lookups go through a bounded LRU cache; the devices and drivers domains call `invalidate*`
 * when they change a device or driver, and entries also expire (other nodes change them too).
 */

export interface DeviceRef {
  id: string;
  accountId: string;
  permissionScopeId: string | null;
  /** Dynamic data routing: the twin with this referenceId (same account) receives its states. */
  referenceId: string | null;
  /** Deactivated: its packets are stored but not processed (`device-inactive`). */
  inactive?: true;
  driver: DriverRef | null;
  /** The device's keyValueData, for a driver's codec (`input.variables`); absent without a driver or data. */
  variables?: Record<string, unknown>;
  /** No frame-counter notices: set on the device or on its connector (`config.skipFrameCounterCheck`). */
  skipFrameCounterCheck?: boolean;
}

export interface ResolvedPacket<P extends StoredPacket = StoredPacket> {
  packet: P;
  device: DeviceRef | null;
}

interface CacheEntry {
  connectorId: string;
  device: DeviceRef | null;
  expiresAt: number;
}

interface DeviceRow {
  connector_id: string;
  device_key: string;
  id: string;
  account_id: string;
  permission_scope_id: string | null;
  reference_id: string | null;
  driver_id: string | null;
  parser: DriverRef['parser'] | null;
  driver_updated_at: Date | null;
  target_variables: DriverRef['targetVariables'] | null;
  key_value_data: Record<string, unknown> | null;
  skip_fcnt: boolean;
  active: boolean;
}

// keyValueData only for devices with a driver (the codec's `variables`): cached devices stay small.
const DEVICE_COLUMNS = `v.id, v.account_id, v.permission_scope_id, v.reference_id, v.active,
         d.id AS driver_id, d.parser, d.updated_at AS driver_updated_at, d.target_variables,
         CASE WHEN d.id IS NOT NULL AND v.key_value_data <> '{}'::jsonb THEN v.key_value_data END AS key_value_data,
         (v.skip_frame_counter_check OR COALESCE(c.config->'skipFrameCounterCheck' = 'true'::jsonb, false)) AS skip_fcnt`;

const LOOKUP_SQL = `
  SELECT u.c AS connector_id, u.k AS device_key, ${DEVICE_COLUMNS}
    FROM unnest($1::uuid[], $2::text[]) AS u(c, k)
    JOIN virtual_devices v ON v.connector_id = u.c AND v.device_id = u.k
    LEFT JOIN connectors c ON c.id = v.connector_id
    LEFT JOIN device_drivers d ON d.id = v.driver_id`;

// Packets not found by device_id whose key is EUI-shaped: a LoRaWAN device may have another device_id
// than its EUI. Its connector's senders can name any of its devices either way, so this grants nothing.
const BY_EUI_SQL = `
  SELECT DISTINCT ON (u.c, u.k) u.c AS connector_id, u.k AS device_key, ${DEVICE_COLUMNS}
    FROM unnest($1::uuid[], $2::text[]) AS u(c, k)
    JOIN virtual_devices v ON v.connector_id = u.c AND v.dev_eui = u.k
    LEFT JOIN connectors c ON c.id = v.connector_id
    LEFT JOIN device_drivers d ON d.id = v.driver_id
   ORDER BY u.c, u.k, v.created_at, v.id`;

/** Lower-case hex EUI-64: the device keys LoRaWAN kinds produce. */
const EUI_KEY = /^[0-9a-f]{16}$/;

const BY_ID_SQL = `
  SELECT v.connector_id, v.device_id AS device_key, ${DEVICE_COLUMNS}
    FROM virtual_devices v
    LEFT JOIN connectors c ON c.id = v.connector_id
    LEFT JOIN device_drivers d ON d.id = v.driver_id
   WHERE v.id = ANY($1::uuid[]) AND v.connector_id IS NOT NULL AND v.device_id IS NOT NULL`;

export interface DeviceCacheOptions {
  maxEntries: number;
  /** Known devices: how long an entry is trusted without an invalidation. */
  ttlMs: number;
  /**
   * Unknown devices: short, so a device created by a bulk import or on another node is found soon;
   * long enough that a flood of packets for unknown ids costs one lookup per second, not per batch.
   */
  negativeTtlMs: number;
  /**
   * An expired entry is still used while a lookup in the background renews it: for the live view,
   * where a lookup on the broker's thread holds up every later packet. An entry that outlived a change
   * made on another node shows that device's packets the old way until the renewal is back (one round
   * trip). Changes made on this node invalidate entries, so they are never served stale.
   */
  serveStale?: boolean;
}

export const DEFAULT_DEVICE_CACHE: DeviceCacheOptions = {
  maxEntries: 20_000,
  ttlMs: 60_000,
  negativeTtlMs: 1_000,
};

const cacheKey = (connectorId: string, deviceKey: string) => `${connectorId}\u0000${deviceKey}`;

export class DeviceResolver {
  // Map iteration order is insertion order: re-inserting on a hit makes the first key the least recent.
  private readonly cache = new Map<string, CacheEntry>();
  // Bumped by every invalidation: a lookup that raced one is used once but not cached.
  private generation = 0;
  /** serveStale: expired keys waiting for their background renewal, and whether one runs. */
  private readonly renewing = new Map<string, { connectorId: string; deviceKey: string }>();
  private renewal: Promise<void> | undefined;

  constructor(
    private readonly pool: pg.Pool,
    private readonly options: DeviceCacheOptions = DEFAULT_DEVICE_CACHE,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.cache.size;
  }

  async resolve<P extends StoredPacket>(packets: P[]): Promise<Array<ResolvedPacket<P>>> {
    const now = this.now();
    const found = new Map<string, DeviceRef | null>();
    const missing = new Map<string, { connectorId: string; deviceKey: string }>();
    for (const p of packets) {
      const key = cacheKey(p.connectorId, p.deviceKey);
      if (found.has(key)) continue;
      const entry = this.cache.get(key);
      if (entry && (entry.expiresAt > now || this.options.serveStale)) {
        found.set(key, entry.device);
        this.cache.delete(key);
        this.cache.set(key, entry);
        if (entry.expiresAt <= now) this.renewLater(key, p.connectorId, p.deviceKey);
      } else {
        missing.set(key, { connectorId: p.connectorId, deviceKey: p.deviceKey });
      }
    }
    if (missing.size > 0) for (const [key, device] of await this.lookUp(missing, now)) found.set(key, device);
    return packets.map((packet) => ({
      packet,
      device: found.get(cacheKey(packet.connectorId, packet.deviceKey)) ?? null,
    }));
  }

  /**
   * Looks up devices by id ahead of their packets (the live view, when a console starts following
   * them), so their first packets find them in the cache. Devices without an address are skipped.
   */
  async preload(deviceIds: string[]): Promise<void> {
    if (deviceIds.length === 0) return;
    const now = this.now();
    const generation = this.generation;
    const { rows } = await this.pool.query<DeviceRow>(BY_ID_SQL, [deviceIds]);
    if (generation !== this.generation) return;
    for (const row of rows) {
      const device = toRef(row);
      this.remember(cacheKey(row.connector_id, row.device_key), {
        connectorId: row.connector_id,
        device,
        expiresAt: now + this.ttl(device),
      });
    }
  }

  private async lookUp(
    keys: Map<string, { connectorId: string; deviceKey: string }>,
    now: number,
  ): Promise<Map<string, DeviceRef | null>> {
    const wanted = [...keys.values()];
    const generation = this.generation;
    const { rows } = await this.pool.query<DeviceRow>(LOOKUP_SQL, [
      wanted.map((w) => w.connectorId),
      wanted.map((w) => w.deviceKey),
    ]);
    const byKey = new Map(rows.map((row) => [cacheKey(row.connector_id, row.device_key), toRef(row)]));
    const byEui = wanted.filter(
      (w) => EUI_KEY.test(w.deviceKey) && !byKey.has(cacheKey(w.connectorId, w.deviceKey)),
    );
    if (byEui.length > 0) {
      const found = await this.pool.query<DeviceRow>(BY_EUI_SQL, [
        byEui.map((w) => w.connectorId),
        byEui.map((w) => w.deviceKey),
      ]);
      for (const row of found.rows) byKey.set(cacheKey(row.connector_id, row.device_key), toRef(row));
    }
    const result = new Map<string, DeviceRef | null>();
    for (const [key, { connectorId }] of keys) {
      const device = byKey.get(key) ?? null;
      result.set(key, device);
      if (generation === this.generation)
        this.remember(key, { connectorId, device, expiresAt: now + this.ttl(device) });
    }
    return result;
  }

  /** serveStale: renews expired keys in the background, one lookup at a time, gathering keys meanwhile. */
  private renewLater(key: string, connectorId: string, deviceKey: string): void {
    this.renewing.set(key, { connectorId, deviceKey });
    this.renewal ??= (async () => {
      // One lookup per round: keys that expire while one runs wait for the next.
      while (this.renewing.size > 0) {
        const keys = new Map(this.renewing);
        this.renewing.clear();
        // A failed renewal leaves the stale entries in use; the next packet of each device retries.
        await this.lookUp(keys, this.now()).catch(() => undefined);
      }
    })().finally(() => (this.renewal = undefined));
  }

  /** Resolves once background renewals are done (tests). */
  async settled(): Promise<void> {
    await this.renewal;
  }

  /**
   * Forgets cached lookups of a device: by its id and/or its (connector, device_id) address; with
   * no argument, everything. Call after a device is created, changed (also its old address) or deleted.
   */
  invalidateDevice(device?: { id?: string; connectorId?: string | null; deviceKey?: string }): void {
    this.generation++;
    if (!device) return this.cache.clear();
    if (device.connectorId && device.deviceKey !== undefined)
      this.cache.delete(cacheKey(device.connectorId, device.deviceKey));
    if (device.id) this.forgetWhere((e) => e.device?.id === device.id);
  }

  /** Forgets every device using that driver: its parser may have changed. */
  invalidateDriver(driverId: string): void {
    this.generation++;
    this.forgetWhere((e) => e.device?.driver?.id === driverId);
  }

  /** Forgets every device of a connector (deactivated, deleted, devices moved). */
  invalidateConnector(connectorId: string): void {
    this.generation++;
    this.forgetWhere((e) => e.connectorId === connectorId);
  }

  private forgetWhere(match: (entry: CacheEntry) => boolean): void {
    for (const [key, entry] of this.cache) if (match(entry)) this.cache.delete(key);
  }

  private remember(key: string, entry: CacheEntry): void {
    this.cache.delete(key);
    this.cache.set(key, entry);
    while (this.cache.size > this.options.maxEntries) {
      const oldest = this.cache.keys().next().value;
      if (oldest === undefined) break;
      this.cache.delete(oldest);
    }
  }

  private ttl(device: DeviceRef | null): number {
    return device ? this.options.ttlMs : this.options.negativeTtlMs;
  }
}

function toRef(row: DeviceRow): DeviceRef {
  const ref: DeviceRef = {
    id: row.id,
    accountId: row.account_id,
    permissionScopeId: row.permission_scope_id,
    referenceId: row.reference_id,
    driver:
      row.driver_id && row.parser
        ? {
            id: row.driver_id,
            parser: row.parser,
            updatedAt: row.driver_updated_at ?? new Date(0),
            targetVariables: row.target_variables ?? [],
          }
        : null,
  };
  if (row.key_value_data) ref.variables = row.key_value_data;
  if (row.skip_fcnt) ref.skipFrameCounterCheck = true;
  if (!row.active) ref.inactive = true;
  return ref;
}
