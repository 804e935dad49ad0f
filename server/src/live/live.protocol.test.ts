import { describe, expect, it } from 'vitest';
import { parseRequest, stateEntry } from './live.protocol.js';

const A = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';
const B = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c';

describe('live protocol', () => {
  it('reads device and twin ids, lower-cased and de-duplicated', () => {
    expect(parseRequest({ subscribe: { deviceIds: [A], twinIds: [B, B.toUpperCase()] } }, 10)).toEqual({
      kind: 'subscribe',
      deviceIds: [A],
      twinIds: [B],
      alarms: false,
    });
    expect(parseRequest({ unsubscribe: { twinIds: [A] } }, 10)).toEqual({
      kind: 'unsubscribe',
      deviceIds: [],
      twinIds: [A],
      alarms: false,
    });
  });

  it('reads a request to follow alarms, alone or with ids', () => {
    expect(parseRequest({ subscribe: { alarms: true } }, 10)).toEqual({
      kind: 'subscribe',
      deviceIds: [],
      twinIds: [],
      alarms: true,
    });
    expect(parseRequest({ unsubscribe: { alarms: true, twinIds: [A] } }, 10)).toMatchObject({ alarms: true });
    expect(typeof parseRequest({ subscribe: { alarms: 'yes' } }, 10)).toBe('string');
  });

  it('refuses requests without ids, with bad ids, or with more ids than allowed in all', () => {
    for (const bad of [
      null,
      { subscribe: null },
      { subscribe: {} },
      { subscribe: { twinIds: 'x' } },
      { subscribe: { twinIds: ['not-a-uuid'] } },
      { subscribe: { deviceIds: [A], twinIds: [B, 7] } },
      { watch: { twinIds: [A] } },
    ])
      expect(typeof parseRequest(bad, 10), JSON.stringify(bad)).toBe('string');
    expect(typeof parseRequest({ subscribe: { deviceIds: [A], twinIds: [B] } }, 1)).toBe('string');
  });

  it('encodes a state change, with a warning only when there is one', () => {
    const change = {
      stateId: A,
      twinId: B,
      accountId: A,
      key: 'flow',
      value: 2.5,
      timestamp: new Date('2026-11-22T01:02:03.456Z'),
      warning: null,
    };
    expect(JSON.parse(stateEntry(change))).toEqual({
      twinId: B,
      stateId: A,
      key: 'flow',
      value: 2.5,
      timestamp: '2026-11-22T01:02:03.456Z',
    });
    expect(JSON.parse(stateEntry({ ...change, value: undefined, warning: 'w' }))).toMatchObject({
      value: null,
      warning: 'w',
    });
  });
});
