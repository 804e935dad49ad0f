import { sameValue } from '../states/engine/state-values.js';
import type { StateChange } from '../states/engine/state-work.js';

/**
 * The value each state of a followed twin was last pushed with, so a value shown on arrival that
 * the consoles already show is not pushed again (a device repeating `status: "on"` every few
 * seconds changes nothing; the engine does not change the stored state for it either).
 *
 * Kept only for twins some console follows: `forget` drops a twin when its last follower goes.
 */
export class ShownStates {
  private readonly byTwin = new Map<string, Map<string, unknown>>();

  /** The arrivals that differ from what was last pushed for their state, remembered as pushed. */
  arrived(changes: StateChange[]): StateChange[] {
    return changes.filter((c) => {
      const shown = this.statesOf(c.twinId);
      if (shown.has(c.stateId) && sameValue(shown.get(c.stateId), c.value)) return false;
      shown.set(c.stateId, c.value);
      return true;
    });
  }

  /** Remembers committed changes about to be pushed (API writes, derived states, declined packets). */
  pushed(changes: StateChange[], followed: (twinId: string) => boolean): void {
    for (const c of changes) if (followed(c.twinId)) this.statesOf(c.twinId).set(c.stateId, c.value);
  }

  forget(twinId: string): void {
    this.byTwin.delete(twinId);
  }

  private statesOf(twinId: string): Map<string, unknown> {
    let states = this.byTwin.get(twinId);
    if (!states) this.byTwin.set(twinId, (states = new Map<string, unknown>()));
    return states;
  }
}
