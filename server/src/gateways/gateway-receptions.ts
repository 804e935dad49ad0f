import type { MikroORM } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import type { StateUpdate } from '../ingest/parse-packet.stage.js';
import { META_STATE_PREFIX, type GatewayReception } from '../ingest/packet-meta.js';
import type { Lifecycle } from '../platform/lifecycle.js';
import { hourOf } from './gateway-figures.js';
import { UnknownGateways } from './unknown-gateways.js';

/**
 * Gateway receptions from processed packets (`_meta.gateways` device states), into gateway
 * status, hourly figures and devices heard.
 *
 * Fleet scale: thousands of uplinks per second must not become thousands of row writes. Each
 * ingest batch is folded in memory into one aggregate per gateway and hour (count, RSSI and SNR
 * sums) and per gateway and device (last heard, last RSSI/SNR, count); while a write is under way
 * further batches fold into the next aggregate. One write is then a handful of statements whatever
 * the number of packets: resolve the gateways, mark them seen and online, upsert the hour buckets
 * and the devices heard, in one transaction, rows in id order (no deadlock between nodes).
 *
 * Matching: within the device's account, by EUI (lower-case), else by the network server's gateway
 * id (`networkId`). Receptions through gateways nobody registered create nothing: they are kept as
 * "unknown gateways heard" (unknown-gateways.ts) so an operator can add them.
 *
 * Failure behaviour: a failed write is logged and its aggregate dropped (figures are statistics;
 * the next uplink marks the gateway online again). Packets are never held back by this. At
 * shutdown the write under way and the pending aggregate are finished; batches after that are let go.
 */

const GATEWAYS_STATE = `${META_STATE_PREFIX}gateways`;
/** Beyond this many pending gateway-device pairs further ones wait for the next batch. */
const MAX_PENDING_DEVICES = 100_000;

interface HourFigures {
  uplinks: number;
  rssiSum: number;
  rssiCount: number;
  snrSum: number;
  snrCount: number;
}

interface DeviceHeard {
  at: number;
  rssi: number | null;
  snr: number | null;
  uplinks: number;
}

/** What one key (an account's gateway EUI or id) was heard doing. */
interface KeyAggregate {
  accountId: string;
  eui: string | null;
  networkId: string | null;
  lastAt: number;
  hours: Map<number, HourFigures>;
  devices: Map<string, DeviceHeard>;
}

const finite = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const text = (v: unknown, max: number): string | null =>
  typeof v === 'string' && v.trim() !== '' && v.length <= max ? v.trim() : null;

/** The receptions a `_meta.gateways` state names, defensively: it is a device state like any other. */
export function receptionsOf(states: Record<string, unknown>): GatewayReception[] {
  const value = states[GATEWAYS_STATE];
  if (!Array.isArray(value)) return [];
  return value.filter((r): r is GatewayReception => r !== null && typeof r === 'object');
}

export class GatewayReceptions implements Lifecycle {
  readonly name = 'gateway-receptions';
  private stopped = false;
  private pending = new Map<string, KeyAggregate>();
  private pendingDevices = 0;
  private writing: Promise<void> | undefined;
  readonly unknown = new UnknownGateways();

  constructor(
    private readonly orm: MikroORM,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** The ingest pipeline's processed listener: folds a batch in and starts a write unless one runs. */
  readonly offer = (updates: readonly StateUpdate[]): void => {
    // After stop the database is about to close: figures of the very last batch are let go.
    if (this.stopped) return;
    const packets = new Set<string>();
    for (const update of updates) {
      const receptions = receptionsOf(update.states);
      if (receptions.length === 0) continue;
      // A parser returning several items yields several updates of one packet: one uplink.
      const packetKey = `${update.deviceId}:${update.packetId}`;
      if (packets.has(packetKey)) continue;
      packets.add(packetKey);
      for (const reception of receptions) this.fold(update, reception);
    }
    if (packets.size > 0) this.kick();
  };

  async start(): Promise<void> {
    this.stopped = false;
  }

  /** Waits for the write under way and what is pending. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.idle();
  }

  /** Resolves once everything offered so far is written (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private fold(update: StateUpdate, reception: GatewayReception): void {
    const eui = text(reception.gatewayEui, 32)?.toLowerCase() ?? null;
    const networkId = text(reception.gatewayId, 100);
    if (!eui && !networkId) return;
    const key = `${update.accountId}|${eui ?? ''}|${networkId ?? ''}`;
    const at = new Date(update.receivedAt).getTime();
    let aggregate = this.pending.get(key);
    if (!aggregate) {
      aggregate = {
        accountId: update.accountId,
        eui,
        networkId,
        lastAt: at,
        hours: new Map(),
        devices: new Map(),
      };
      this.pending.set(key, aggregate);
    }
    aggregate.lastAt = Math.max(aggregate.lastAt, at);
    const rssi = finite(reception.rssi);
    const snr = finite(reception.snr);
    const hour = hourOf(at).getTime();
    const figures = aggregate.hours.get(hour) ?? {
      uplinks: 0,
      rssiSum: 0,
      rssiCount: 0,
      snrSum: 0,
      snrCount: 0,
    };
    figures.uplinks += 1;
    if (rssi !== null) {
      figures.rssiSum += rssi;
      figures.rssiCount += 1;
    }
    if (snr !== null) {
      figures.snrSum += snr;
      figures.snrCount += 1;
    }
    aggregate.hours.set(hour, figures);
    const heard = aggregate.devices.get(update.deviceId);
    if (heard) {
      heard.uplinks += 1;
      if (at >= heard.at) Object.assign(heard, { at, rssi, snr });
    } else if (this.pendingDevices < MAX_PENDING_DEVICES) {
      aggregate.devices.set(update.deviceId, { at, rssi, snr, uplinks: 1 });
      this.pendingDevices += 1;
    }
  }

  private kick(): void {
    if (this.writing) return;
    this.writing = (async () => {
      while (this.pending.size > 0) {
        const batch = this.pending;
        this.pending = new Map();
        this.pendingDevices = 0;
        try {
          await this.write([...batch.values()]);
        } catch (error) {
          this.log.warn({ err: error, keys: batch.size }, 'gateway receptions were not recorded');
        }
      }
    })().finally(() => {
      this.writing = undefined;
    });
  }

  private async write(aggregates: KeyAggregate[]): Promise<void> {
    const knex = this.orm.em.getConnection().getKnex();
    await knex.transaction(async (trx) => {
      const keys = aggregates.map((a, i) => ({ i, a: a.accountId, e: a.eui, n: a.networkId }));
      const matches = (
        await trx.raw<{ rows: Array<{ i: number; id: string }> }>(
          `SELECT DISTINCT ON (k.i) k.i, g.id
             FROM jsonb_to_recordset(?::jsonb) AS k(i int, a uuid, e text, n text)
             JOIN gateways g ON g.account_id = k.a AND (g.eui = k.e OR g.network_id = k.n)
            ORDER BY k.i, (g.eui = k.e) DESC NULLS LAST`,
          [JSON.stringify(keys)],
        )
      ).rows;
      const byGateway = new Map<string, KeyAggregate[]>();
      const matched = new Set<number>();
      for (const { i, id } of matches) {
        matched.add(i);
        byGateway.set(id, [...(byGateway.get(id) ?? []), aggregates[i]!]);
      }
      aggregates.forEach((a, i) => {
        if (!matched.has(i)) this.unknown.heard(a.accountId, a.eui, a.networkId, a.lastAt, sumUplinks(a));
      });
      if (byGateway.size === 0) return;
      const ids = [...byGateway.keys()].sort();
      const seen = ids.map((id) => ({
        id,
        at: new Date(Math.max(...byGateway.get(id)!.map((a) => a.lastAt))).toISOString(),
      }));
      const hours: Array<Record<string, unknown>> = [];
      const devices: Array<Record<string, unknown>> = [];
      for (const id of ids) {
        const mergedHours = new Map<number, HourFigures>();
        const mergedDevices = new Map<string, DeviceHeard>();
        for (const a of byGateway.get(id)!) {
          for (const [hour, f] of a.hours) {
            const m = mergedHours.get(hour);
            mergedHours.set(hour, m ? addFigures(m, f) : { ...f });
          }
          for (const [deviceId, d] of a.devices) {
            const m = mergedDevices.get(deviceId);
            mergedDevices.set(deviceId, m ? mergeHeard(m, d) : { ...d });
          }
        }
        for (const [hour, f] of [...mergedHours].sort((x, y) => x[0] - y[0]))
          hours.push({ g: id, h: new Date(hour).toISOString(), ...f });
        for (const [deviceId, d] of [...mergedDevices].sort((x, y) => x[0].localeCompare(y[0])))
          devices.push({
            g: id,
            d: deviceId,
            at: new Date(d.at).toISOString(),
            r: d.rssi,
            s: d.snr,
            u: d.uplinks,
          });
      }
      // Online from an uplink newer than what was seen so far (a replayed old packet changes nothing).
      await trx.raw(
        `UPDATE gateways g
            SET last_seen_at = u.at,
                status_changed_at = CASE WHEN g.status <> 'online' THEN u.at ELSE g.status_changed_at END,
                status = 'online'
           FROM jsonb_to_recordset(?::jsonb) AS u(id uuid, at timestamptz)
          WHERE g.id = u.id AND (g.last_seen_at IS NULL OR g.last_seen_at < u.at)`,
        [JSON.stringify(seen)],
      );
      await trx.raw(
        `INSERT INTO gateway_reception_hours AS t (gateway_id, hour, uplinks, rssi_sum, rssi_count, snr_sum, snr_count)
         SELECT g, h, "uplinks", "rssiSum", "rssiCount", "snrSum", "snrCount"
           FROM jsonb_to_recordset(?::jsonb)
             AS x(g uuid, h timestamptz, "uplinks" int, "rssiSum" float8, "rssiCount" int, "snrSum" float8, "snrCount" int)
         ON CONFLICT (gateway_id, hour) DO UPDATE SET
           uplinks = t.uplinks + excluded.uplinks,
           rssi_sum = t.rssi_sum + excluded.rssi_sum, rssi_count = t.rssi_count + excluded.rssi_count,
           snr_sum = t.snr_sum + excluded.snr_sum, snr_count = t.snr_count + excluded.snr_count`,
        [JSON.stringify(hours)],
      );
      // Devices deleted meanwhile are skipped (the join), not an error that loses the whole batch.
      await trx.raw(
        `INSERT INTO gateway_devices AS t (gateway_id, device_id, last_heard_at, rssi, snr, uplinks)
         SELECT x.g, x.d, x.at, x.r, x.s, x.u
           FROM jsonb_to_recordset(?::jsonb) AS x(g uuid, d uuid, at timestamptz, r float8, s float8, u int)
           JOIN virtual_devices vd ON vd.id = x.d
         ON CONFLICT (gateway_id, device_id) DO UPDATE SET
           rssi = CASE WHEN excluded.last_heard_at >= t.last_heard_at THEN excluded.rssi ELSE t.rssi END,
           snr = CASE WHEN excluded.last_heard_at >= t.last_heard_at THEN excluded.snr ELSE t.snr END,
           last_heard_at = greatest(t.last_heard_at, excluded.last_heard_at),
           uplinks = t.uplinks + excluded.uplinks`,
        [JSON.stringify(devices)],
      );
    });
  }
}

const sumUplinks = (a: KeyAggregate) => [...a.hours.values()].reduce((n, f) => n + f.uplinks, 0);

const addFigures = (a: HourFigures, b: HourFigures): HourFigures => ({
  uplinks: a.uplinks + b.uplinks,
  rssiSum: a.rssiSum + b.rssiSum,
  rssiCount: a.rssiCount + b.rssiCount,
  snrSum: a.snrSum + b.snrSum,
  snrCount: a.snrCount + b.snrCount,
});

const mergeHeard = (a: DeviceHeard, b: DeviceHeard): DeviceHeard => ({
  ...(b.at >= a.at ? { at: b.at, rssi: b.rssi, snr: b.snr } : { at: a.at, rssi: a.rssi, snr: a.snr }),
  uplinks: a.uplinks + b.uplinks,
});
