import { sameValue } from '../states/engine/state-values.js';
import type { StateChange } from '../states/engine/state-work.js';

/** A state's value as last pushed, and the newest time the consoles were shown it for. */
interface Shown {
  value: unknown;
  at: number;
}

/**
 * The value each state of a followed twin was last pushed with, so a value shown on arrival that
 * the consoles already show is not pushed again (a device repeating `status: "on"` every few
 * seconds changes nothing; the engine does not change the stored state for it either), and a
 * committed change is left out only when its value or a later one was really shown on arrival.
 *
 * Kept only for twins some console follows: `forget` drops a twin when its last follower goes.
 */
export class ShownStates {
  private readonly byTwin = new Map<string, Map<string, Shown>>();

  /** The arrivals that differ from what was last pushed for their state, remembered as pushed. */
  arrived(changes: StateChange[]): StateChange[] {
    return changes.filter((c) => {
      const states = this.statesOf(c.twinId);
      const shown = states.get(c.stateId);
      const at = c.timestamp.getTime();
      if (shown && sameValue(shown.value, c.value)) {
        shown.at = Math.max(shown.at, at);
        return false;
      }
      states.set(c.stateId, { value: c.value, at });
      return true;
    });
  }

  /** Remembers committed changes about to be pushed (API writes, derived states, declined packets). */
  pushed(changes: StateChange[], followed: (twinId: string) => boolean): void {
    for (const c of changes)
      if (followed(c.twinId))
        this.statesOf(c.twinId).set(c.stateId, { value: c.value, at: c.timestamp.getTime() });
  }

  /**
   * Whether the consoles were shown this change, or a later value of its state, since the twin's
   * newest follower came. A change whose packet was shown on arrival can still be news: the broker's
   * thread routed the packet with definitions loaded before a state was added, or the follower came
   * between the packet's arrival and its commit.
   */
  covers(change: StateChange): boolean {
    const shown = this.byTwin.get(change.twinId)?.get(change.stateId);
    return shown !== undefined && shown.at >= change.timestamp.getTime();
  }

  forget(twinId: string): void {
    this.byTwin.delete(twinId);
  }

  private statesOf(twinId: string): Map<string, Shown> {
    let states = this.byTwin.get(twinId);
    if (!states) this.byTwin.set(twinId, (states = new Map<string, Shown>()));
    return states;
  }
}
