import type { FastifyBaseLogger } from 'fastify';
import { parsedOnArrival } from '../drivers/parsers/index.js';
import type { Metrics } from '../platform/metrics.js';
import type { DriverParsing } from './driver-parsing.js';
import type { IncomingPacket } from './ingest.types.js';
import { parsePackets, type PacketOutcome, type StateUpdate } from './parse-packet.stage.js';
import type { DeviceRef, DeviceResolver } from './resolve-device.stage.js';

/**
 * The live view of arriving packets (ADR 0104), on the main thread: every packet the packet spool
 * accepts is resolved (cached), parsed and pushed to the consoles that follow its device at once,
 * in `setImmediate` batches, while its record is still being written to disk. Consoles see a value
 * within a millisecond or two of its arrival, whatever the ingest worker is busy with. The twin
 * states such a packet sets directly are shown from the same parse (ADR 0135).
 *
 * What it leaves out, and who shows those packets instead:
 * - devices nobody follows, directly or through a twin (`wanted`): no resolve beyond the cache, no
 *   parse, no encoding;
 * - devices whose driver runs user code (the sandboxed JavaScript parser, up to its time limit): the
 *   broker's thread never waits for it; the ingest worker pushes them after their commit (the
 *   worker applies the same `parsedOnArrival` rule);
 * - packets arriving while the server is overloaded (`overloaded`: the main thread's event loop
 *   saturated or the ingest worker far behind, or more than `maxPending` packets wait here): declined (`take` returns false, counted in
 *   `stellwerk_live_shed_total`), so the broker's thread spends its CPU on accepting packets; the
 *   ingest worker shows them after their commit, as it does during a burst anyway.
 *
 * Failure behaviour:
 * - Visible before durable: a packet whose spool write then fails was never acknowledged but may
 *   have been shown; its values are never stored, and the sender sends it again (ADR 0092, 0104).
 * - A resolve or parse failure is logged and the batch is not shown; nothing else depends on it
 *   (the ingest worker resolves, parses and stores every packet itself).
 * - Batches run one after another, so a device's live updates keep packet order.
 */

/** A state update as consoles see it; the packet id is only known after the packet's commit. */
export type VisibleUpdate = Omit<StateUpdate, 'packetId'>;
export type VisibleListener = (updates: VisibleUpdate[]) => void;

export interface VisibleStageOptions {
  resolver: DeviceResolver;
  parsing: DriverParsing;
  /**
   * Whether anyone wants a device's updates (a live console follows it or a twin its values set, or
   * a whole-update listener).
   */
  wanted: (device: DeviceRef) => boolean;
  /** Gets each batch's parsed packets of wanted devices, in arrival order. */
  publish: (outcomes: PacketOutcome[]) => void;
  /** Awaited before each batch, ahead of `wanted` (brings the state routing index up to date). */
  prepare?: () => Promise<void>;
  /**
   * Why the server cannot keep up right now (counted as the shed metric's `reason`), or null; arriving
   * packets are declined while it names a reason.
   */
  overloaded: () => OverloadReason | null;
  metrics: Metrics;
  log: FastifyBaseLogger;
  maxPending?: number;
}

/**
 * `event-loop`: the broker's thread saturated; `backlog`: the ingest worker far behind; `pending`:
 * more than `maxPending` packets wait here to be shown.
 */
export type OverloadReason = 'event-loop' | 'backlog' | 'pending';

const DEFAULT_MAX_PENDING = 5000;

export class VisibleStage {
  private pending: IncomingPacket[] = [];
  private waiting = 0;
  private scheduled = false;
  private chain: Promise<void> = Promise.resolve();
  private readonly maxPending: number;
  private readonly shed;
  private readonly delay;

  constructor(private readonly options: VisibleStageOptions) {
    this.maxPending = options.maxPending ?? DEFAULT_MAX_PENDING;
    this.shed = options.metrics.counter(
      'stellwerk_live_shed_total',
      'Arriving packets the live view declined while overloaded (shown after their commit instead), by reason',
      ['reason'],
    );
    this.delay = options.metrics.histogram(
      'stellwerk_live_arrival_to_push_seconds',
      "From a packet's arrival to its updates being handed to the live consoles (packets shown on arrival)",
      [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25],
    );
  }

  /**
   * Called by the packet spool for each packet it accepted, before the packet is on disk. False: the
   * packet is declined (overloaded) and left to the ingest worker to show after its commit.
   */
  take(packet: IncomingPacket): boolean {
    const overloaded = this.waiting >= this.maxPending ? 'pending' : this.options.overloaded();
    if (overloaded) {
      this.shed.inc({ reason: overloaded });
      return false;
    }
    this.waiting++;
    this.pending.push(packet);
    if (!this.scheduled) {
      this.scheduled = true;
      // setImmediate, not a microtask: gathers every packet read in this round of I/O into one batch.
      setImmediate(() => this.flush());
    }
    return true;
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.pending;
    this.pending = [];
    this.chain = this.chain.then(() => this.show(batch));
  }

  private async show(batch: IncomingPacket[]): Promise<void> {
    const { resolver, parsing, wanted, publish, prepare, log } = this.options;
    try {
      await prepare?.();
      // The update type needs a packet id; consoles never see it (packetEntry).
      const resolved = await resolver.resolve(batch.map((packet) => ({ ...packet, id: 0n })));
      const shown = resolved.filter(
        ({ device }) => device !== null && wanted(device) && parsedOnArrival(device.driver),
      );
      if (shown.length === 0) return;
      const outcomes = await parsePackets(shown, parsing);
      if (!outcomes.some((o) => o.updates.length > 0)) return;
      publish(outcomes);
      const now = Date.now();
      for (const { packet } of shown) this.delay.observe((now - packet.receivedAt.getTime()) / 1000);
    } catch (error) {
      log.warn({ err: error }, 'live view: resolving or parsing arriving packets failed; not shown');
    } finally {
      this.waiting -= batch.length;
    }
  }
}
