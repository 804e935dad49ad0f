import type { LiveAlarmFollowers } from './live.alarms.js';
import type { LiveConnection } from './live.connection.js';
import type { LiveTopic } from './live.protocol.js';

/**
 * One connection's re-check (LiveHub, after a visibility change and every minute): re-reads its
 * principal (closing with 4401 when its credential is gone) and unfollows what it may no longer see:
 * alarms, a topic whose permission it lost, ids outside its tenancy or permission scopes now. Each
 * loss is reported to the client as `unsubscribed` with `reason: 'notVisible'`.
 */
export async function recheckConnection(
  c: LiveConnection,
  now: Date,
  alarms: LiveAlarmFollowers,
  unfollow: (topic: LiveTopic, id: string) => void,
): Promise<void> {
  if (!c.open) return;
  const grant = await c.grant.refresh(now);
  if (!grant) {
    c.socket.close(4401, 'credential revoked or expired');
    return;
  }
  c.grant = grant;
  if (alarms.recheck(c)) {
    c.send(
      JSON.stringify({
        type: 'unsubscribed',
        deviceIds: [],
        twinIds: [],
        alarms: true,
        reason: 'notVisible',
      }),
    );
  }
  const followed = { devices: [...c.subscriptions.devices], twins: [...c.subscriptions.twins] };
  const may = (topic: LiveTopic) => grant.refusal(topic) === null;
  const [devices, twins] = await Promise.all([
    may('devices') ? grant.visible('devices', followed.devices) : new Set<string>(),
    may('twins') ? grant.visible('twins', followed.twins) : new Set<string>(),
  ]);
  const lost = {
    devices: followed.devices.filter((id) => !devices.has(id) && c.subscriptions.devices.has(id)),
    twins: followed.twins.filter((id) => !twins.has(id) && c.subscriptions.twins.has(id)),
  };
  if (lost.devices.length === 0 && lost.twins.length === 0) return;
  for (const id of lost.devices) unfollow('devices', id);
  for (const id of lost.twins) unfollow('twins', id);
  c.send(
    JSON.stringify({
      type: 'unsubscribed',
      deviceIds: lost.devices,
      twinIds: lost.twins,
      reason: 'notVisible',
    }),
  );
}
