import type { EntityManager } from '@mikro-orm/postgresql';
import { DataState } from '../states/data-state.entity.js';
import { DigitalTwin } from '../twins/digital-twin.entity.js';
import type { Dashboard } from './dashboard.entity.js';

/**
 * What a published dashboard shows to anyone holding its key, and nothing more: its widgets (a
 * nested dashboard is not part of it: it has its own key, or none), the twins its widgets name, the
 * states its widgets name on those twins, and for each map widget the located twins it draws. A
 * twin counts only when it belongs to the dashboard's own account, as a twin's dashboard and a map
 * widget's twins do (a layout is free JSON and may name anything); a state only on its widget's own twin. Twins carry title and place, no more.
 */

const MAP_TWIN_LIMIT = 500;

export interface PublicTwin {
  id: string;
  title: string;
  latitude: number | null;
  longitude: number | null;
}

export interface PublicState {
  id: string;
  twinId: string;
  key: string;
  title: string;
  valueType: string;
  unit: string | null;
  value: unknown;
  timestamp: string | null;
  warning: string | null;
  /** Only `meta.visual` (how a widget draws it: gauge bounds, unit). */
  meta: { visual?: unknown };
}

export interface PublicDashboard {
  id: string;
  title: string;
  description: string;
  layout: { version: 1; widgets: Record<string, unknown>[] };
  twins: PublicTwin[];
  states: PublicState[];
  /** Per map widget id: the located twins it draws. */
  maps: Record<string, PublicTwin[]>;
}

/** Twin and state ids a published dashboard may show: what its public live socket may follow. */
export interface PublishedIds {
  twins: Set<string>;
  states: Set<string>;
}

type Widget = Record<string, unknown>;

const widgetsOf = (dashboard: Dashboard): Widget[] => {
  const layout = dashboard.layout;
  if (layout.version !== 1 || !Array.isArray(layout.widgets)) return [];
  return (layout.widgets as unknown[]).filter(
    (w): w is Widget => typeof w === 'object' && w !== null && (w as Widget).type !== 'dashboard',
  );
};

const stringsOf = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];

const twinDto = (t: DigitalTwin): PublicTwin => ({
  id: t.id,
  title: t.title,
  latitude: t.latitude,
  longitude: t.longitude,
});

/** The widgets' twins (in the dashboard's account tree) and their widgets' states on them. */
async function widgetData(
  em: EntityManager,
  dashboard: Dashboard,
  widgets: Widget[],
): Promise<{ twins: DigitalTwin[]; states: DataState[]; allowed: Map<Widget, string[]> }> {
  const twinIds = [
    ...new Set(widgets.map((w) => w.twinId).filter((id): id is string => typeof id === 'string')),
  ];
  const stateIds = [...new Set(widgets.flatMap((w) => stringsOf(w.stateIds)))];
  const accountId = dashboard.account.id;
  const twins =
    twinIds.length === 0 ? [] : await em.find(DigitalTwin, { id: { $in: twinIds }, account: accountId });
  const twinSet = new Set(twins.map((t) => t.id));
  const states =
    stateIds.length === 0 || twinSet.size === 0
      ? []
      : await em.find(
          DataState,
          { id: { $in: stateIds }, twin: { $in: [...twinSet] } },
          { orderBy: { id: 'asc' } },
        );
  const twinOf = new Map(states.map((s) => [s.id, s.twin.id]));
  const allowed = new Map(
    widgets.map((w) => [
      w,
      typeof w.twinId === 'string' && twinSet.has(w.twinId)
        ? stringsOf(w.stateIds).filter((id) => twinOf.get(id) === w.twinId)
        : [],
    ]),
  );
  const shown = new Set([...allowed.values()].flat());
  return { twins, states: states.filter((s) => shown.has(s.id)), allowed };
}

/** The ids a published dashboard shows (its live socket follows these and pushes only these states). */
export async function publishedIds(em: EntityManager, dashboard: Dashboard): Promise<PublishedIds> {
  const widgets = widgetsOf(dashboard);
  const { allowed } = await widgetData(em, dashboard, widgets);
  const twins = new Set<string>();
  const states = new Set<string>();
  for (const [widget, ids] of allowed) {
    if (typeof widget.twinId === 'string' && ids.length > 0) twins.add(widget.twinId);
    for (const id of ids) states.add(id);
  }
  return { twins, states };
}

/** The dashboard as its public view shows it (see the top of this file). */
export async function publicDashboard(em: EntityManager, dashboard: Dashboard): Promise<PublicDashboard> {
  const widgets = widgetsOf(dashboard);
  const { twins, states, allowed } = await widgetData(em, dashboard, widgets);
  const twinSet = new Set(twins.map((t) => t.id));
  const maps: Record<string, PublicTwin[]> = {};
  for (const widget of widgets.filter((w) => w.type === 'map')) {
    const tag = typeof widget.tag === 'string' && widget.tag ? widget.tag : null;
    const located = await em.find(
      DigitalTwin,
      {
        account: dashboard.account.id,
        latitude: { $ne: null },
        longitude: { $ne: null },
        ...(tag ? { tags: { $contains: [tag] } } : {}),
      },
      { orderBy: { title: 'asc', id: 'asc' }, limit: MAP_TWIN_LIMIT },
    );
    maps[String(widget.id)] = located.map(twinDto);
  }
  return {
    id: dashboard.id,
    title: dashboard.title,
    description: dashboard.description,
    layout: {
      version: 1,
      widgets: widgets.map((widget) => {
        const { twinId, stateIds, dashboardId: _nested, ...rest } = widget;
        return {
          ...rest,
          ...(typeof twinId === 'string' && twinSet.has(twinId) ? { twinId } : {}),
          ...(stateIds !== undefined ? { stateIds: allowed.get(widget) ?? [] } : {}),
        };
      }),
    },
    twins: twins.map(twinDto),
    states: states.map((s) => ({
      id: s.id,
      twinId: s.twin.id,
      key: s.key,
      title: s.title,
      valueType: s.valueType,
      unit: s.unit,
      value: s.value,
      timestamp: s.timestamp?.toISOString() ?? null,
      warning: s.warning,
      meta: s.meta.visual !== undefined ? { visual: s.meta.visual } : {},
    })),
    maps,
  };
}
