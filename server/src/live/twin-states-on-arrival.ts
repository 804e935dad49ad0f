import type { PacketOutcome } from '../ingest/parse-packet.stage.js';
import type { DeviceRef } from '../ingest/resolve-device.stage.js';
import type { RoutingIndex } from '../states/engine/routing-index.js';
import { valueWarning } from '../states/engine/state-values.js';
import type { StateChange } from '../states/engine/state-work.js';

/**
 * Twin states shown on arrival (ADR 0135): the live view parses a followed device's packet on the
 * broker's thread as it arrives (ADR 0104); the twin states its values set directly (routed by
 * device or by reference id) are worked out here from the state engine's routing index and pushed
 * to the consoles that follow those twins, in the same batch, long before the ingest worker commits.
 *
 * Only what a value sets by itself is shown here: a state routed from a device takes the value it
 * was sent, with the arrival time as its timestamp and the same value-type warning the engine
 * gives. States derived from others (aggregates, differences, calendar periods, windows) need the
 * stored rows and are pushed after the commit, as before.
 *
 * The ingest worker marks the changes of packets shown on arrival `shownLive`, and the live hub
 * does not push those again (ADR 0135 says which edge cases that leaves: a twin followed between a
 * packet's arrival and its commit, definitions changed in that window).
 */

export interface TwinStatesOnArrivalOptions {
  /**
   * The state engine's routing index as loaded now, maybe one definition change behind while it
   * reloads (StateEngine.loadedRouting): a batch never waits for a reload of every definition.
   */
  loadedRouting: () => RoutingIndex | undefined;
  /** Loads it when there is none yet (StateEngine.routing): the first batch waits once. */
  routing: () => Promise<RoutingIndex>;
  /** Whether a console follows a twin (LiveHub.followsTwin). */
  followsTwin: (twinId: string) => boolean;
  /** Changes whenever the set of followed twins changes (LiveHub.followedTwinsVersion). */
  followedTwinsVersion: () => number;
  /** Pushes the changes to the twins' followers (LiveHub.publishArrivedStates). */
  publish: (changes: StateChange[]) => void;
}

export class TwinStatesOnArrival {
  private index: RoutingIndex | undefined;
  /**
   * `wants` per device, for one routing index and one set of followed twins: every packet of every
   * device is asked about while any twin is followed, and the answer only changes with those two.
   */
  private readonly wanted = new Map<
    string,
    { accountId: string; referenceId: string | null; wanted: boolean }
  >();
  private wantedFor: { index: RoutingIndex | undefined; followed: number } = {
    index: undefined,
    followed: -1,
  };

  constructor(private readonly options: TwinStatesOnArrivalOptions) {}

  /**
   * Takes the routing index as loaded now before a batch; only the first batch waits for a load.
   * When the definitions cannot be loaded, the batch's packets are still shown, without twin states,
   * and the engine reports the failure.
   */
  async prepare(): Promise<void> {
    const loaded = this.options.loadedRouting();
    if (loaded) {
      this.index = loaded;
      return;
    }
    try {
      this.index = await this.options.routing();
    } catch {
      // See above.
    }
  }

  /** Whether this device's values set a state of a twin a console follows. */
  wants(device: DeviceRef): boolean {
    const index = this.index;
    if (!index || index.routedCount === 0) return false;
    const followed = this.options.followedTwinsVersion();
    if (this.wantedFor.index !== index || this.wantedFor.followed !== followed) {
      this.wanted.clear();
      this.wantedFor = { index, followed };
    }
    const known = this.wanted.get(device.id);
    // A device's account and reference id route it too: an edited one is looked up again.
    if (known && known.referenceId === device.referenceId && known.accountId === device.accountId)
      return known.wanted;
    const wanted = this.feedsFollowedTwin(index, device);
    this.wanted.set(device.id, { accountId: device.accountId, referenceId: device.referenceId, wanted });
    return wanted;
  }

  private feedsFollowedTwin(index: RoutingIndex, device: DeviceRef): boolean {
    for (const byKey of index.routesOf(addressOf(device)))
      for (const stateIds of byKey.values())
        for (const id of stateIds) {
          const twinId = index.byId.get(id)?.twinId;
          if (twinId !== undefined && this.options.followsTwin(twinId)) return true;
        }
    return false;
  }

  /** Pushes the followed twin states the batch's updates set, in update order. */
  show(outcomes: PacketOutcome[]): void {
    const index = this.index;
    if (!index || index.routedCount === 0) return;
    const changes: StateChange[] = [];
    for (const { device, updates } of outcomes) {
      if (!device) continue;
      for (const u of updates)
        index.forEachRouted(addressOf(device), u.states, (stateId, sent) => {
          const def = index.byId.get(stateId);
          if (!def || !this.options.followsTwin(def.twinId)) return;
          const value = sent ?? null;
          changes.push({
            stateId,
            twinId: def.twinId,
            accountId: def.accountId,
            key: def.key,
            value,
            timestamp: u.receivedAt,
            warning: valueWarning(value, def.valueType),
          });
        });
    }
    if (changes.length > 0) this.options.publish(changes);
  }
}

const addressOf = (device: DeviceRef) => ({
  deviceId: device.id,
  accountId: device.accountId,
  referenceId: device.referenceId,
});
