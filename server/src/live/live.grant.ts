import type { EntityManager } from '@mikro-orm/postgresql';
import { hasPermission, type Principal } from '../auth/principal.js';
import { errors, type AppError } from '../platform/errors.js';
import { currentPrincipal, visibleDevices, visibleTwins } from './live.access.js';
import type { LiveTopic } from './live.protocol.js';

/**
 * What one live connection may follow. A signed-in principal follows by its permissions, tenancy
 * and permission scopes (`principalGrant`); a public dashboard's viewer only that dashboard's twins
 * and states (dashboards/public-dashboard.live.ts). The hub asks the grant, never the principal.
 */
export interface LiveGrant {
  /** Why the topic may not be followed at all (sent as an `error` message), or null. */
  refusal(topic: LiveTopic): AppError | null;
  /** Of `ids`, those this grant may follow. */
  visible(topic: LiveTopic, ids: string[]): Promise<Set<string>>;
  /** Only changes of these states are pushed; null: every state of a followed twin. */
  readonly states: ReadonlySet<string> | null;
  /** The signed-in principal; none for a public dashboard's viewer (who follows no alarms). */
  readonly principal?: Principal;
  /** The grant as it stands now (re-read), or null once its credential is gone (closed with 4401). */
  refresh(now: Date): Promise<LiveGrant | null>;
}

/** What following each topic needs, besides seeing the object (devices: their packets; twins: their states). */
export const LIVE_PERMISSIONS: Record<LiveTopic, string> = {
  devices: 'VirtualDevice.read',
  twins: 'state.read',
};

export function principalGrant(em: () => EntityManager, principal: Principal): LiveGrant {
  return {
    principal,
    states: null,
    refusal: (topic) =>
      hasPermission(principal, LIVE_PERMISSIONS[topic]) ? null : errors.noPermission(LIVE_PERMISSIONS[topic]),
    visible: (topic, ids) =>
      topic === 'devices' ? visibleDevices(em, principal, ids) : visibleTwins(em, principal, ids),
    async refresh(now) {
      const current = await currentPrincipal(em, principal, now);
      return current ? principalGrant(em, current) : null;
    },
  };
}
