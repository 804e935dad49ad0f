import type { VisibleUpdate } from '../ingest/visible.stage.js';
import type { AlarmEntry } from '../integration/ports.js';
import { isUuid } from '../platform/crypto/ids.js';
import type { StateChange } from '../states/engine/state-work.js';

/**
 * The wire format of the live WebSocket (docs/live.md): parsing client requests and encoding the
 * entries of the server's batch messages. Entries are encoded once per update and shared by every
 * console that follows it.
 */

/** What a connection can follow: devices (their packets) and twins (their data-state changes). */
export type LiveTopic = 'devices' | 'twins';

export interface LiveRequest {
  kind: 'subscribe' | 'unsubscribe';
  deviceIds: string[];
  twinIds: string[];
  /** Follow (or stop following) the alarm entries the caller may read. */
  alarms: boolean;
}

const EXPECTED =
  'Expected {"subscribe":{"deviceIds":[…],"twinIds":[…],"alarms":true}} or {"unsubscribe":{…}}';

/** The request in `message`, or why it is not one. Ids are de-duplicated and lower-cased. */
export function parseRequest(message: unknown, maxIds: number): LiveRequest | string {
  if (typeof message !== 'object' || message === null) return EXPECTED;
  const body = message as Record<string, unknown>;
  const kind = 'subscribe' in body ? 'subscribe' : 'unsubscribe' in body ? 'unsubscribe' : undefined;
  if (!kind) return EXPECTED;
  const target = body[kind];
  if (typeof target !== 'object' || target === null) return EXPECTED;
  const {
    deviceIds = [],
    twinIds = [],
    alarms = false,
  } = target as { deviceIds?: unknown; twinIds?: unknown; alarms?: unknown };
  const invalid = `${kind}.deviceIds and ${kind}.twinIds must be arrays of ids (UUIDs), at most ${maxIds} in all`;
  if (!isIdList(deviceIds) || !isIdList(twinIds)) return invalid;
  if (typeof alarms !== 'boolean') return `${kind}.alarms must be true or false`;
  if (!('deviceIds' in target) && !('twinIds' in target) && !('alarms' in target)) return invalid;
  if (deviceIds.length + twinIds.length > maxIds) return invalid;
  return { kind, deviceIds: normalised(deviceIds), twinIds: normalised(twinIds), alarms };
}

const isIdList = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((id) => typeof id === 'string' && isUuid(id));

const normalised = (ids: string[]): string[] => [...new Set(ids.map((id) => id.toLowerCase()))];

/** One entry of an `alarms` message: the entry as it stands after the change (docs/live.md). */
export const alarmEntry = (a: AlarmEntry): string =>
  JSON.stringify({
    id: a.id,
    accountId: a.accountId,
    category: a.category,
    message: a.message,
    status: a.status,
    severity: a.severity,
    occurrenceCount: a.occurrenceCount,
    lastSeenAt: a.lastSeenAt.toISOString(),
    reference: a.reference,
    source: a.source,
    createdAt: a.createdAt.toISOString(),
  });

/** One entry of a `packets` message. */
export const packetEntry = (u: VisibleUpdate): string =>
  JSON.stringify({ deviceId: u.deviceId, receivedAt: u.receivedAt.toISOString(), states: u.states });

/** One entry of a `states` message; `warning` only when the value does not fit the state's type. */
export const stateEntry = (c: StateChange): string =>
  JSON.stringify({
    twinId: c.twinId,
    stateId: c.stateId,
    key: c.key,
    value: c.value ?? null,
    timestamp: c.timestamp.toISOString(),
    ...(c.warning ? { warning: c.warning } : {}),
  });
