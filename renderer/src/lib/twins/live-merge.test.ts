import { describe, expect, it } from 'vitest';
import { isNotOlder, withNewerLive } from './live-merge';
import type { LiveStateChange } from './live-twins';
import type { TwinState } from './twin-api';

describe('a live change against a value read from the API', () => {
  it('stands when it is newer or as new, or the read value was never set', () => {
    expect(isNotOlder('2026-11-22T09:00:01.000Z', '2026-11-22T09:00:00.000Z')).toBe(true);
    expect(isNotOlder('2026-11-22T09:00:00.000Z', '2026-11-22T09:00:00.000Z')).toBe(true);
    expect(isNotOlder('2026-11-22T09:00:00.000Z', null)).toBe(true);
    expect(isNotOlder('2026-11-22T09:00:00.000Z', undefined)).toBe(true);
  });

  it('gives way to a newer read value, also across time zone notations', () => {
    expect(isNotOlder('2026-11-22T09:00:00.000Z', '2026-11-22T09:00:00.001Z')).toBe(false);
    expect(isNotOlder('2026-11-22T09:00:00.000Z', '2026-11-22T10:00:00.500+01:00')).toBe(false);
  });

  it('puts the newest live change over an older read, and leaves a newer read as it is', () => {
    const read = (id: string, value: unknown, timestamp: string) => ({ id, value, timestamp }) as TwinState;
    const change = (stateId: string, value: unknown, timestamp: string) =>
      ({ twinId: 't', stateId, key: stateId, value, timestamp }) as LiveStateChange;
    const latest = new Map([
      ['pump', change('pump', true, '2026-11-22T09:00:01.000Z')],
      ['temp', change('temp', 70, '2026-11-22T09:00:00.000Z')],
    ]);
    const states = withNewerLive(
      [
        read('pump', false, '2026-11-22T09:00:00.000Z'),
        read('temp', 74, '2026-11-22T09:00:02.000Z'),
        read('level', 3, '2026-11-22T09:00:00.000Z'),
      ],
      latest,
    );
    expect(states.map((s) => [s.id, s.value, s.timestamp])).toEqual([
      ['pump', true, '2026-11-22T09:00:01.000Z'],
      ['temp', 74, '2026-11-22T09:00:02.000Z'],
      ['level', 3, '2026-11-22T09:00:00.000Z'],
    ]);
  });
});
