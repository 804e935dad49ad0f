import type { LiveStateChange } from './live-twins';
import type { TwinState } from './twin-api';

/**
 * Whether a live change's time is at least the time of the value a read returned: then the live
 * value stands (the read was answered before the change but arrived after it). A value never set
 * (no timestamp) counts as oldest.
 */
export function isNotOlder(liveTimestamp: string, readTimestamp: string | null | undefined): boolean {
  return !readTimestamp || Date.parse(liveTimestamp) >= Date.parse(readTimestamp);
}

/** Puts a live change's value, time and warning on a state. */
export function applyChange(state: TwinState, change: LiveStateChange): void {
  state.value = change.value;
  state.timestamp = change.timestamp;
  state.warning = change.warning ?? null;
}

/**
 * States just read, with the newest live change of each put over a value older than it (`latest`:
 * the newest change per state id seen on the socket, also before the read).
 */
export function withNewerLive(
  states: TwinState[],
  latest: ReadonlyMap<string, LiveStateChange>,
): TwinState[] {
  for (const state of states) {
    const live = latest.get(state.id);
    if (live && isNotOlder(live.timestamp, state.timestamp)) applyChange(state, live);
  }
  return states;
}
