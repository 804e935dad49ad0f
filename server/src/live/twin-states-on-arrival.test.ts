import { describe, expect, it } from 'vitest';
import type { PacketOutcome } from '../ingest/parse-packet.stage.js';
import type { DeviceRef } from '../ingest/resolve-device.stage.js';
import { RoutingIndex, type StateDefinition } from '../states/engine/routing-index.js';
import type { StateSource } from '../states/state-source.js';
import type { StateChange } from '../states/engine/state-work.js';
import { ShownStates } from './live.shown-states.js';
import { TwinStatesOnArrival } from './twin-states-on-arrival.js';

const ACCOUNT = 'acc-1';

function def(id: string, twinId: string, key: string, source: StateSource | null): StateDefinition {
  return {
    id,
    twinId,
    accountId: ACCOUNT,
    key,
    valueType: 'number',
    source,
    timeZone: 'UTC',
    referenceId: twinId === 'twin-ref' ? 'pump-7' : null,
  };
}

const device = (id: string, referenceId: string | null = null): DeviceRef => ({
  id,
  accountId: ACCOUNT,
  permissionScopeId: null,
  referenceId,
  driver: null,
});

const definitions = [
  def('flow', 'twin-a', 'flow', { type: 'connector', connectorId: 'c', deviceId: 'dev-1', stateKey: 'f' }),
  def('mode', 'twin-a', 'mode', { type: 'connector', connectorId: 'c', deviceId: 'dev-1', stateKey: 'm' }),
  def('double', 'twin-a', 'double', { type: 'aggregate', operation: 'sum', stateIds: ['flow', 'flow'] }),
  def('other', 'twin-b', 'flow', { type: 'connector', connectorId: 'c', deviceId: 'dev-1', stateKey: 'f' }),
  def('level', 'twin-ref', 'level', { type: 'dynamic-routing', stateKey: 'level' }),
];

function outcome(of: DeviceRef, at: Date, ...states: Array<Record<string, unknown>>): PacketOutcome {
  return {
    packet: {
      id: 1n,
      connectorId: 'c',
      deviceKey: of.id,
      payload: Buffer.alloc(0),
      source: 'test',
      receivedAt: at,
    },
    device: of,
    status: 'parsed',
    error: null,
    updates: states.map((s) => ({
      deviceId: of.id,
      accountId: of.accountId,
      permissionScopeId: null,
      packetId: 1n,
      receivedAt: at,
      states: s,
    })),
  };
}

async function arrival(initiallyFollowed: string[]) {
  const published: StateChange[][] = [];
  let followed = initiallyFollowed;
  let version = 0;
  const twins = new TwinStatesOnArrival({
    loadedRouting: () => undefined,
    routing: async () => new RoutingIndex(definitions),
    followsTwin: (id) => followed.includes(id),
    followedTwinsVersion: () => version,
    publish: (changes) => published.push(changes),
  });
  await twins.prepare();
  const follow = (ids: string[]) => {
    followed = ids;
    version++;
  };
  return { twins, published, follow };
}

describe('twin states on arrival', () => {
  it('wants the devices whose values set a followed twin state, by device or by reference id', async () => {
    const { twins } = await arrival(['twin-a', 'twin-ref']);
    expect(twins.wants(device('dev-1'))).toBe(true);
    expect(twins.wants(device('dev-2', 'pump-7'))).toBe(true);
    expect(twins.wants(device('dev-2', 'pump-8'))).toBe(false);
    const onlyB = await arrival(['twin-b']);
    expect(onlyB.twins.wants(device('dev-1'))).toBe(true);
    expect(onlyB.twins.wants(device('dev-2', 'pump-7'))).toBe(false);
  });

  it('answers anew when the followed twins or the device’s reference id change', async () => {
    const { twins, follow } = await arrival(['twin-ref']);
    expect(twins.wants(device('dev-1'))).toBe(false);
    expect(twins.wants(device('dev-2', 'pump-7'))).toBe(true);
    // The same device with another reference id routes elsewhere.
    expect(twins.wants(device('dev-2', 'pump-8'))).toBe(false);
    follow(['twin-a']);
    expect(twins.wants(device('dev-1'))).toBe(true);
    expect(twins.wants(device('dev-2', 'pump-7'))).toBe(false);
  });

  it('wants nothing before the routing index is loaded', () => {
    const twins = new TwinStatesOnArrival({
      loadedRouting: () => undefined,
      routing: async () => new RoutingIndex(definitions),
      followsTwin: () => true,
      followedTwinsVersion: () => 0,
      publish: () => undefined,
    });
    expect(twins.wants(device('dev-1'))).toBe(false);
  });

  it('takes the index as loaded without waiting, and waits for a load only when there is none', async () => {
    let loaded: RoutingIndex | undefined = undefined;
    let loads = 0;
    const twins = new TwinStatesOnArrival({
      loadedRouting: () => loaded,
      routing: async () => {
        loads++;
        throw new Error('database unavailable');
      },
      followsTwin: (id) => id === 'twin-a',
      followedTwinsVersion: () => 0,
      publish: () => undefined,
    });
    // Nothing loaded and the load fails: the batch goes on without twin states.
    await expect(twins.prepare()).resolves.toBeUndefined();
    expect(twins.wants(device('dev-1'))).toBe(false);
    expect(loads).toBe(1);
    loaded = new RoutingIndex(definitions);
    await twins.prepare();
    expect(twins.wants(device('dev-1'))).toBe(true);
    expect(loads).toBe(1);
  });

  it("pushes the directly routed states of followed twins, in update order, with the engine's warning", async () => {
    const { twins, published } = await arrival(['twin-a', 'twin-ref']);
    const at = new Date('2026-11-27T08:00:00Z');
    twins.show([
      outcome(device('dev-1'), at, { f: 4.5, m: 'auto', ignored: 1 }, { f: 5 }),
      outcome(device('dev-3', 'pump-7'), at, { level: 80 }),
      outcome(device('dev-4'), at, { f: 1 }),
    ]);
    expect(published).toHaveLength(1);
    expect(published[0]!.map((c) => [c.twinId, c.stateId, c.key, c.value, c.warning])).toEqual([
      ['twin-a', 'flow', 'flow', 4.5, null],
      ['twin-a', 'mode', 'mode', 'auto', 'value "auto" does not fit value type number'],
      ['twin-a', 'flow', 'flow', 5, null],
      ['twin-ref', 'level', 'level', 80, null],
    ]);
    expect(published[0]!.every((c) => c.timestamp === at && c.accountId === ACCOUNT)).toBe(true);
  });

  it('pushes nothing for a batch that sets no followed twin state', async () => {
    const { twins, published } = await arrival(['twin-ref']);
    twins.show([outcome(device('dev-1'), new Date(), { f: 1 })]);
    expect(published).toEqual([]);
  });
});

describe('shown states', () => {
  const change = (stateId: string, value: unknown, twinId = 'twin-a'): StateChange => ({
    stateId,
    twinId,
    accountId: ACCOUNT,
    key: stateId,
    value,
    timestamp: new Date(),
    warning: null,
  });

  it('leaves out an arrival that repeats the value last pushed for its state', () => {
    const shown = new ShownStates();
    expect(shown.arrived([change('flow', 1), change('mode', { on: true })])).toHaveLength(2);
    const later = change('flow', 2);
    expect(shown.arrived([change('flow', 1), change('mode', { on: true }), later])).toEqual([later]);
    // Compared by value, not by object identity.
    expect(shown.arrived([change('mode', { on: false })])).toHaveLength(1);
  });

  it('counts committed pushes of followed twins as shown, and forgets a twin', () => {
    const shown = new ShownStates();
    shown.arrived([change('flow', 1)]);
    shown.pushed([change('flow', 3), change('level', 9, 'twin-b')], (twinId) => twinId === 'twin-a');
    // The console shows 3 now: an arrival of 1 is news again, one of 3 is not.
    expect(shown.arrived([change('flow', 3)])).toEqual([]);
    expect(shown.arrived([change('flow', 1)])).toHaveLength(1);
    // twin-b was not followed: nothing was remembered of it.
    expect(shown.arrived([change('level', 9, 'twin-b')])).toHaveLength(1);
    shown.forget('twin-a');
    expect(shown.arrived([change('flow', 1)])).toHaveLength(1);
  });

  it('covers a committed change only when its value or a later one was shown', () => {
    const shown = new ShownStates();
    const at = (stateId: string, value: unknown, ms: number): StateChange => ({
      ...change(stateId, value),
      timestamp: new Date(ms),
    });
    shown.arrived([at('flow', 1, 1000)]);
    expect(shown.covers(at('flow', 1, 1000))).toBe(true);
    // Never shown: a state the arrival did not route (definitions loaded before it was added).
    expect(shown.covers(at('level', 5, 1000))).toBe(false);
    // An older packet's change is covered by the later value shown; a newer one is not.
    shown.arrived([at('flow', 2, 2000)]);
    expect(shown.covers(at('flow', 1, 1000))).toBe(true);
    expect(shown.covers(at('flow', 3, 3000))).toBe(false);
    // A repeated value moves the time shown on.
    shown.arrived([at('flow', 2, 4000)]);
    expect(shown.covers(at('flow', 2, 4000))).toBe(true);
    // A new follower was shown nothing yet.
    shown.forget('twin-a');
    expect(shown.covers(at('flow', 2, 4000))).toBe(false);
  });
});
