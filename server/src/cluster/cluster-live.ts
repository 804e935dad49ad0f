import type { AlarmEntry } from '../integration/ports.js';
import type { StateChange } from '../states/engine/state-work.js';
import type { ClusterBus } from './cluster-bus.js';

/** What the live fanout needs of LiveHub: the same calls local updates take. */
export interface LiveSink {
  publishEncoded(deviceIds: readonly string[], entries: readonly string[]): void;
  publishStates(changes: StateChange[]): void;
  publishAlarms(entries: AlarmEntry[]): Promise<void>;
}

export interface LiveSources {
  onVisibleEntries(listener: (deviceIds: readonly string[], entries: readonly string[]) => void): void;
  onStateChanges(listener: (changes: StateChange[]) => void): void;
  onAlarmsChanged(listener: (entries: AlarmEntry[]) => void): void;
}

const ALARM_DATES = ['lastSeenAt', 'createdAt'] as const;

/**
 * Live fanout across nodes (ADR 0131): what this node's LiveHub gets is sent to every other node's
 * LiveHub, which filters by its own sockets' principals exactly as for local updates (the bus carries
 * no tenancy decision). Each kind is gathered for one tick, so a busy node sends one bus message per
 * kind and tick, not one per packet.
 */
export function wireClusterLive(bus: ClusterBus, sources: LiveSources, live: LiveSink): void {
  if (!bus.clustered) return;
  const packets = new TickBatch<[string, string]>((items) =>
    bus.publish('live.packets', { deviceIds: items.map((i) => i[0]), entries: items.map((i) => i[1]) }),
  );
  const states = new TickBatch<StateChange>((changes) =>
    bus.publish('live.states', {
      changes: changes.map((c) => ({ ...c, timestamp: c.timestamp.toISOString() })),
    }),
  );
  const alarms = new TickBatch<AlarmEntry>((entries) =>
    bus.publish('live.alarms', {
      entries: entries.map((e) => ({
        ...e,
        lastSeenAt: e.lastSeenAt.toISOString(),
        createdAt: e.createdAt.toISOString(),
      })),
    }),
  );
  sources.onVisibleEntries((deviceIds, entries) => packets.add(deviceIds.map((id, i) => [id, entries[i]!])));
  sources.onStateChanges((changes) => states.add(changes));
  sources.onAlarmsChanged((entries) => alarms.add(entries));

  bus.subscribe('live.packets', ({ deviceIds, entries }) => live.publishEncoded(deviceIds, entries));
  bus.subscribe('live.states', ({ changes }) =>
    live.publishStates(
      changes.map((c) => ({ ...c, timestamp: new Date(c.timestamp as string) }) as unknown as StateChange),
    ),
  );
  bus.subscribe('live.alarms', ({ entries }) => {
    const revived = entries.map((e) => {
      const entry = { ...e };
      for (const key of ALARM_DATES) entry[key] = new Date(e[key] as string);
      return entry as unknown as AlarmEntry;
    });
    void live.publishAlarms(revived);
  });
}

/** Gathers items until the end of this tick, then hands them over in one call. */
class TickBatch<T> {
  private items: T[] = [];
  private scheduled = false;

  constructor(private readonly flush: (items: T[]) => void) {}

  add(items: readonly T[]): void {
    if (items.length === 0) return;
    for (const item of items) this.items.push(item);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      const batch = this.items;
      this.items = [];
      this.flush(batch);
    });
  }
}
