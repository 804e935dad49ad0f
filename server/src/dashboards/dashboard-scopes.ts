import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import { visibleTwinSql } from '../twins/twin-scopes.js';

/**
 * Dashboards belong to an account, not to a permission scope, but a version-1 layout names twins
 * (`twinId`) and data states (`stateIds`) in its widgets. A reader restricted to permission
 * scopes gets the layout without the twins and states it does not see — exactly as if they did
 * not exist, the widget itself stays — and when it saves the layout back, the references it could
 * not see are kept, so a read-back `PUT` never drops another user's widgets' content. Layouts of
 * other versions are stored as sent and shown as stored. Widget titles are the author's text.
 */

type Layout = Record<string, unknown>;
type Widget = Record<string, unknown>;

const widgetsOf = (layout: Layout | undefined): Widget[] =>
  layout?.version === 1 && Array.isArray(layout.widgets)
    ? (layout.widgets as unknown[]).filter((w): w is Widget => typeof w === 'object' && w !== null)
    : [];

const stateIdsOf = (widget: Widget): string[] =>
  Array.isArray(widget.stateIds) ? widget.stateIds.filter((id): id is string => typeof id === 'string') : [];

function referencedIds(layouts: Layout[]): { twins: Set<string>; states: Set<string> } {
  const twins = new Set<string>();
  const states = new Set<string>();
  for (const widget of layouts.flatMap(widgetsOf)) {
    if (typeof widget.twinId === 'string') twins.add(widget.twinId);
    for (const id of stateIdsOf(widget)) states.add(id);
  }
  return { twins, states };
}

/** Of the named twins and states, those the principal sees (twins by scope, states by their twin). */
async function visibleIds(
  em: EntityManager,
  principal: Principal,
  ids: { twins: Set<string>; states: Set<string> },
): Promise<Set<string>> {
  const scope = visibleTwinSql(principal, 't');
  const [twins, states] = await Promise.all([
    ids.twins.size === 0
      ? []
      : em.execute<Array<{ id: string }>>(
          `SELECT t.id FROM digital_twins t WHERE t.id IN (?) AND (${scope.sql})`,
          [[...ids.twins], ...scope.params],
        ),
    ids.states.size === 0
      ? []
      : em.execute<Array<{ id: string }>>(
          `SELECT s.id FROM data_states s JOIN digital_twins t ON t.id = s.twin_id WHERE s.id IN (?) AND (${scope.sql})`,
          [[...ids.states], ...scope.params],
        ),
  ]);
  return new Set([...twins, ...states].map((r) => r.id));
}

/** The layouts as `reader` sees them (the same objects when it is not restricted). */
export async function layoutsFor(em: EntityManager, reader: Principal, layouts: Layout[]): Promise<Layout[]> {
  if (reader.permissionScopeIds === null) return layouts;
  const ids = referencedIds(layouts);
  if (ids.twins.size === 0 && ids.states.size === 0) return layouts;
  const visible = await visibleIds(em, reader, ids);
  return layouts.map((layout) => {
    if (widgetsOf(layout).length === 0) return layout;
    const widgets = (layout.widgets as unknown[]).map((item) => {
      if (typeof item !== 'object' || item === null) return item;
      const { twinId, stateIds, ...rest } = item as Widget;
      return {
        ...rest,
        ...(typeof twinId === 'string' && visible.has(twinId) ? { twinId } : {}),
        ...(Array.isArray(stateIds)
          ? { stateIds: stateIdsOf(item as Widget).filter((id) => visible.has(id)) }
          : {}),
      };
    });
    return { ...layout, widgets };
  });
}

/**
 * The layout a restricted `saver` sends, with the references of the stored layout it cannot see
 * put back into the widgets of the same id (a widget it removed goes with them). An unrestricted
 * saver's layout is taken as sent.
 */
export async function withHiddenReferences(
  em: EntityManager,
  saver: Principal,
  stored: Layout,
  input: Layout,
): Promise<Layout> {
  if (saver.permissionScopeIds === null || widgetsOf(input).length === 0) return input;
  const storedWidgets = new Map(widgetsOf(stored).map((w) => [w.id, w]));
  if (storedWidgets.size === 0) return input;
  const visible = await visibleIds(em, saver, referencedIds([stored]));
  const widgets = (input.widgets as unknown[]).map((item) => {
    if (typeof item !== 'object' || item === null) return item;
    const widget = item as Widget;
    const before = storedWidgets.get(widget.id);
    if (!before) return widget;
    const hiddenTwin =
      typeof before.twinId === 'string' && !visible.has(before.twinId) ? before.twinId : undefined;
    const hiddenStates = stateIdsOf(before).filter((id) => !visible.has(id));
    const states = [...stateIdsOf(widget), ...hiddenStates.filter((id) => !stateIdsOf(widget).includes(id))];
    return {
      ...widget,
      ...(widget.twinId === undefined && hiddenTwin ? { twinId: hiddenTwin } : {}),
      ...(states.length > 0 || widget.stateIds !== undefined ? { stateIds: states } : {}),
    };
  });
  return { ...input, widgets };
}
