import { api } from '../../api/client';
import type { Reply } from '../../api/generated';
import type { Language } from '../i18n.svelte';
import type { ChartAnswer } from '../charts/chart-query';
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
    chart: {
      // The public history route serves fixed ranges per state (no query text from a viewer): the
      // shortest that reaches back to the window's start, cut to the window; no CSV download.
      async run(query): Promise<ChartAnswer> {
        const range = publicHistoryRange(query.from, Date.now());
        const replies = await Promise.all(
          query.stateIds.map((stateId) =>
            api.call('GET /hub/api/v1/public-dashboards/{id}/history', {
              path: { id: dashboardId },
              query: { stateId, range },
              apiKey: key,
            }),
          ),
        );
        const rows = replies.flatMap((reply, index) =>
          reply.points
            .filter((point) => {
              const at = Date.parse(point.time);
              return at >= query.from && at <= query.to;
            })
            .map((point) => [point.time, query.stateIds[index], point.value]),
        );
        return { columns: [{ name: 'time' }, { name: 'state_id' }, { name: 'value' }], rows };
      },
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

const PUBLIC_RANGES = [
  ['1h', 3_600_000],
  ['6h', 6 * 3_600_000],
  ['24h', 24 * 3_600_000],
  ['7d', 7 * 86_400_000],
  ['30d', 30 * 86_400_000],
] as const;

/** The public history route's shortest range that reaches back to `from` (at most 30 days). */
export function publicHistoryRange(from: number, now: number): (typeof PUBLIC_RANGES)[number][0] {
  return (PUBLIC_RANGES.find(([, ms]) => now - ms <= from) ?? PUBLIC_RANGES[PUBLIC_RANGES.length - 1]!)[0];
}
