import type { EntityManager } from '@mikro-orm/postgresql';
import { errors } from '../platform/errors.js';
import type { LiveGrant } from '../live/live.grant.js';
import type { DashboardShareService, OpenedShare } from './dashboard-share.service.js';
import { publishedIds } from './public-dashboard.view.js';

/**
 * What a public dashboard's live socket may follow: the twins its widgets show, and of them only
 * the states its widgets show; never devices. Re-checked with the hub's rounds (and at once when a
 * key is rotated or revoked): a key that no longer opens the dashboard closes the socket (4401),
 * and a changed layout narrows or widens what is pushed.
 */
export async function publicDashboardGrant(
  em: () => EntityManager,
  shares: DashboardShareService,
  opened: OpenedShare,
): Promise<LiveGrant> {
  // Forked: re-checks run outside any request's unit of work.
  const ids = await publishedIds(em().fork(), opened.dashboard);
  return {
    states: ids.states,
    refusal: (topic) => (topic === 'devices' ? errors.noPermission('VirtualDevice.read') : null),
    visible: async (topic, list) => new Set(topic === 'twins' ? list.filter((id) => ids.twins.has(id)) : []),
    async refresh() {
      const dashboard = await shares.reopen(opened);
      return dashboard ? publicDashboardGrant(em, shares, { ...opened, dashboard }) : null;
    },
  };
}
