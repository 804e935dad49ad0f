import type { FastifyBaseLogger } from 'fastify';
import type { DriverParsing } from './driver-parsing.js';
import type { IncomingPacket } from './ingest.types.js';
import type { StoredPacket } from './packet-store.js';
import { parsePackets, type PacketOutcome, type StateUpdate } from './parse-packet.stage.js';
import type { DeviceResolver } from './resolve-device.stage.js';

/**
 * Stage 0 (ADR 0092, 0103): packets become visible before their states commit. The packet store hands
 * over each spooled packet (already durable and acknowledged, ADR 0103) before its INSERT; this stage
 * resolves (cached) and parses it at once, in small batches, and pushes the resulting state updates to
 * the visible listeners (live consoles). The commit path later picks up the same outcome for the
 * stored packet instead of parsing twice.
 *
 * Failure behaviour:
 * - What consoles see here is acknowledged data, persisted by the commit path shortly after (a crash
 *   in between replays it from the spool and the cursor).
 * - A resolve or parse failure here is logged and ignored: the commit path resolves and parses such
 *   packets itself and makes them visible after their commit, as it does for replayed packets.
 * - Bounded: beyond `maxInFlight` packets waiting here, new packets skip this stage (same fallback).
 * - Batches run one after another, so a device's live updates keep packet order.
 */

/** A state update as consoles see it; the packet id is only known after the commit. */
export type VisibleUpdate = Omit<StateUpdate, 'packetId'>;
export type VisibleListener = (updates: VisibleUpdate[]) => void;

type Early = Promise<Map<IncomingPacket, PacketOutcome> | undefined>;

export class VisibleStage {
  private pending: IncomingPacket[] = [];
  private scheduled = false;
  private chain: Promise<unknown> = Promise.resolve();
  private inFlight = 0;
  // Weak: an entry disappears with its packet (commit failed, feed overflowed, already consumed).
  private readonly early = new WeakMap<IncomingPacket, Early>();

  constructor(
    private readonly resolver: DeviceResolver,
    private readonly parsing: DriverParsing,
    private readonly publish: VisibleListener,
    private readonly log: FastifyBaseLogger,
    private readonly maxInFlight = 20_000,
  ) {}

  /** Called by the packet store for each spooled packet, before its INSERT. */
  take(packet: IncomingPacket): void {
    if (this.inFlight >= this.maxInFlight) return;
    this.inFlight++;
    this.pending.push(packet);
    if (this.scheduled) return;
    this.scheduled = true;
    // setImmediate, not a microtask: gathers every packet read in this round of I/O into one batch.
    setImmediate(() => this.flush());
  }

  /**
   * Outcomes for committed packets, in order: taken from this stage when it handled the packet
   * (`visible` true: already pushed), otherwise undefined (the caller resolves and parses it).
   */
  async outcomes(batch: StoredPacket[]): Promise<Array<PacketOutcome | undefined>> {
    const found: Array<PacketOutcome | undefined> = [];
    for (const packet of batch) {
      const early = packet.incoming && this.early.get(packet.incoming);
      const outcome = early && (await early)?.get(packet.incoming!);
      if (!outcome) {
        found.push(undefined);
        continue;
      }
      this.early.delete(packet.incoming!);
      found.push({
        ...outcome,
        packet,
        updates: outcome.updates.map((u) => ({ ...u, packetId: packet.id })),
      });
    }
    return found;
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.pending;
    this.pending = [];
    const done: Early = this.chain.then(() => this.process(batch));
    this.chain = done;
    for (const packet of batch) this.early.set(packet, done);
  }

  private async process(batch: IncomingPacket[]): Promise<Map<IncomingPacket, PacketOutcome> | undefined> {
    try {
      const resolved = await this.resolver.resolve(batch.map((packet) => ({ ...packet, id: 0n })));
      const outcomes = await parsePackets(resolved, this.parsing);
      const updates: VisibleUpdate[] = [];
      for (const o of outcomes) for (const u of o.updates) updates.push(u);
      try {
        this.publish(updates);
      } catch (error) {
        this.log.warn({ err: error }, 'ingest pipeline: a visible listener failed');
      }
      return new Map(outcomes.map((o, i) => [batch[i]!, o]));
    } catch (error) {
      this.log.warn(
        { err: error },
        'ingest pipeline: early resolve or parse failed; left to the commit path',
      );
      return undefined;
    } finally {
      this.inFlight -= batch.length;
    }
  }
}
