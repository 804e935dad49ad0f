import { api } from '../../api/client';
import type { Reply } from '../../api/generated';
import type { Language } from '../i18n.svelte';
import { LiveTwins, publicDashboardLive } from '../twins/live-twins';
import { parseMapView, type MapView } from '../twins/map-view';
import type { Twin, TwinState } from '../twins/twin-api';
import type { DashboardSource } from './dashboard-data.svelte';

export type PublicDashboard = Reply<'GET /hub/api/v1/public-dashboards/{id}'>;

/** The spec's public view parameters (query string), as the console reads them too; English unless `language=de`. */
export interface PublicViewOptions extends MapView {
  language: Language;
}

/** What a widget of a public view needs besides the dashboard's data. */
export interface PublicWidgetView extends PublicViewOptions {
  maps: PublicDashboard['maps'];
}

export interface PublicLocation {
  dashboardId: string | null;
  /** From the fragment (`#key=…`), which browsers never send to the server, nor in a Referer. */
  key: string | null;
  options: PublicViewOptions;
}

const PUBLIC_PATH = /^\/public\/dashboards\/([0-9a-fA-F-]{36})\/?$/;

/** Reads the dashboard id, its key and the view parameters from the page's address. */
export function parsePublicLocation(location: {
  pathname: string;
  search: string;
  hash: string;
}): PublicLocation {
  const fragment = new URLSearchParams(location.hash.replace(/^#/, ''));
  const view = parseMapView(new URLSearchParams(location.search));
  return {
    dashboardId: PUBLIC_PATH.exec(location.pathname)?.[1]?.toLowerCase() ?? null,
    key: fragment.get('key') || null,
    options: { ...view, language: view.language ?? 'en' },
  };
}

/** The share link with view parameters: they go in the query, the key stays in the fragment. */
export function linkWithOptions(url: string, options: { zoomLock: boolean; language: Language }): string {
  const link = new URL(url);
  if (options.zoomLock) link.searchParams.set('zoomlock', 'true');
  if (options.language !== 'en') link.searchParams.set('language', options.language);
  return link.href;
}

/**
 * A published dashboard's data through its key: every read is one request for the whole dashboard
 * (`onView` gets it: layout and maps may have changed too); live over the public socket. Twins
 * come as title and place only, shaped as the widgets expect.
 */
export function publicSource(
  dashboardId: string,
  key: string,
  onView: (view: PublicDashboard) => void,
): DashboardSource & { fetch: () => Promise<PublicDashboard> } {
  const fetch = async () => {
    const view = await api.call('GET /hub/api/v1/public-dashboards/{id}', {
      path: { id: dashboardId },
      apiKey: key,
    });
    onView(view);
    return view;
  };
  return {
    fetch,
    live: new LiveTwins(publicDashboardLive(dashboardId, key)),
    async history(state, range) {
      const reply = await api.call('GET /hub/api/v1/public-dashboards/{id}/history', {
        path: { id: dashboardId },
        query: { stateId: state.id, range: range === '90d' ? '30d' : range },
        apiKey: key,
      });
      return reply.points.map((point) => [point.time, point.value]);
    },
    async read(twinIds) {
      const view = await fetch();
      const byId = new Map(view.twins.map((twin) => [twin.id, twin]));
      const twins = Object.fromEntries(
        twinIds.map((id) => {
          const twin = byId.get(id);
          const shaped = twin
            ? { ...twin, hierarchy: [{ id: twin.id, title: twin.title }], states: [] }
            : null;
          return [id, shaped as unknown as Twin | null];
        }),
      );
      return { twins, states: view.states as unknown as TwinState[] };
    },
  };
}
