import type pg from 'pg';
import { META_STATE_PREFIX } from './packet-meta.js';
import type { PacketOutcome } from './parse-packet.stage.js';

/**
 * The LoRaWAN frame-counter check: an uplink whose `meta.fCnt` equals the device's previous one is a
 * repeat (a retransmission, or a replayed frame); a lower one is a reset (the device restarted or
 * rejoined without a join reaching Stellwerk, or a counter rolled over). Either is kept and processed
 * like any packet, with a packet warning and a connector log notice (connector-notices.ts), unless
 * the device or its connector skips the check (`skipFrameCounterCheck`). A join (`meta.event`
 * `join`) resets the expectation: the next uplink may start at any counter.
 *
 * The previous counter is remembered per device in memory (bounded); a device not remembered reads
 * its `_meta.fCnt` state (and a later `_meta.event` join) once. A packet at or below the packet that
 * set what is remembered is a replay of the ingest path after a restart, not a repeat: never flagged.
 */

interface Last {
  /** Undefined after a join: any counter is fine next. */
  fCnt: number | undefined;
  packetId: bigint;
}

const LOOKUP_SQL = `
  SELECT device_id, key, value, packet_id FROM device_states
   WHERE device_id = ANY($1::uuid[]) AND key = ANY($2::text[]) AND packet_id IS NOT NULL`;

const FCNT = `${META_STATE_PREFIX}fCnt`;
const EVENT = `${META_STATE_PREFIX}event`;

export class FrameCounters {
  private readonly last = new Map<string, Last>();

  constructor(
    private readonly pool: Pick<pg.Pool, 'query'>,
    private readonly maxDevices = 50_000,
  ) {}

  /** Adds the notices to the outcomes (`warnings`, `frameCounter`), in packet order. */
  async check(outcomes: PacketOutcome[]): Promise<void> {
    const concerned = outcomes.filter((o) => o.device && (o.packet.meta?.fCnt !== undefined || isJoin(o)));
    if (concerned.length === 0) return;
    const unknown = [...new Set(concerned.map((o) => o.device!.id))].filter((id) => !this.last.has(id));
    if (unknown.length > 0) await this.load(unknown);
    for (const o of concerned) {
      const deviceId = o.device!.id;
      const previous = this.last.get(deviceId);
      if (previous && o.packet.id <= previous.packetId) continue;
      if (isJoin(o)) {
        this.remember(deviceId, { fCnt: undefined, packetId: o.packet.id });
        continue;
      }
      const event = o.packet.meta!.event;
      if (event && event !== 'uplink') continue;
      const fCnt = o.packet.meta!.fCnt!;
      if (previous?.fCnt !== undefined && !o.device!.skipFrameCounterCheck && fCnt <= previous.fCnt) {
        const repeat = fCnt === previous.fCnt;
        o.frameCounter = repeat ? 'repeat' : 'reset';
        o.warnings = [
          ...(o.warnings ?? []),
          repeat
            ? `Frame counter repeated: fCnt ${fCnt} was received before (a retransmission or a replayed frame)`
            : `Frame counter reset: fCnt ${fCnt} after ${previous.fCnt} (the device restarted or rejoined)`,
        ];
      }
      this.remember(deviceId, { fCnt, packetId: o.packet.id });
    }
  }

  private async load(deviceIds: string[]): Promise<void> {
    const { rows } = await this.pool.query<{
      device_id: string;
      key: string;
      value: unknown;
      packet_id: string;
    }>(LOOKUP_SQL, [deviceIds, [FCNT, EVENT]]);
    const found = new Map<string, { fCnt?: Last; join?: bigint }>();
    for (const row of rows) {
      const entry = found.get(row.device_id) ?? {};
      found.set(row.device_id, entry);
      if (row.key === FCNT && typeof row.value === 'number')
        entry.fCnt = { fCnt: row.value, packetId: BigInt(row.packet_id) };
      else if (row.key === EVENT && row.value === 'join') entry.join = BigInt(row.packet_id);
    }
    for (const id of deviceIds) {
      const entry = found.get(id);
      if (entry?.join !== undefined && (!entry.fCnt || entry.join > entry.fCnt.packetId))
        this.remember(id, { fCnt: undefined, packetId: entry.join });
      else this.remember(id, entry?.fCnt ?? { fCnt: undefined, packetId: 0n });
    }
  }

  private remember(deviceId: string, last: Last): void {
    this.last.delete(deviceId);
    this.last.set(deviceId, last);
    if (this.last.size > this.maxDevices) this.last.delete(this.last.keys().next().value!);
  }
}

const isJoin = (o: PacketOutcome) => o.packet.meta?.event === 'join';
