import type { EntityManager } from '@mikro-orm/postgresql';
import type { Account } from '../accounts/account.entity.js';
import { VirtualDevice } from '../devices/virtual-device.entity.js';
import type { ScopeFilter } from '../permission-scopes/scope-filter.js';
import { errors } from '../platform/errors.js';
import { problem } from '../platform/http/problem-detail.js';
import { sourceDescriptor, sourceTypesWhere } from './sources/index.js';
import { sourceStateIds, type StateSource } from './state-source.js';

/**
 * What a state's source points at, and who points at a state: references must exist in the
 * state's own account (another tenant's objects are "not found", never "forbidden"), aggregations
 * must not form a cycle, and what other states aggregate cannot be deleted.
 */

/** Source types that read other states: the edges of the dependency graph. */
export const AGGREGATING_SOURCE_TYPES = sourceTypesWhere((d) => d.reads !== undefined);

/** Source types fed through a connector's device (they block deleting that connector or device). */
const CONNECTOR_FED_SOURCE_TYPES = sourceTypesWhere((d) => d.device === 'connector');

export interface StateRef {
  id: string;
  key: string;
  twinId: string;
}

interface StateRow extends StateRef {
  source: StateSource | null;
}

const notFound = (path: string, id: string | undefined, message: string) =>
  errors.validation(`Invalid source: ${path} ${message}`, [
    { location: 'body', ...problem(path, 'notFound', { id }, message) },
  ]);

/**
 * Checks that the connector, device and states a source names exist in `account` and that the
 * caller sees them through its permission scopes (`visible`: the device's scope, the effective
 * scope of the state's twin); then that saving it as state `selfId` closes no cycle. Throws
 * VALIDATION_ERROR (400) naming the path, the same for a hidden object as for a missing one, or
 * 422 CIRCULAR_STATE_REFERENCE with the cycle.
 */
export async function checkSourceReferences(
  em: EntityManager,
  account: Account,
  self: StateRef,
  source: StateSource,
  visible: ScopeFilter,
): Promise<void> {
  const descriptor = sourceDescriptor(source.type);
  if (descriptor?.device) {
    const { deviceId, connectorId } = source as { deviceId: string; connectorId?: string };
    const device = await em.findOne(
      VirtualDevice,
      { id: deviceId, account: account.id },
      { fields: ['id', 'connector', 'permissionScope'] },
    );
    if (!device || !visible.allows(device.permissionScope?.id))
      throw notFound('/source/deviceId', deviceId, `device ${deviceId} not found`);
    if (descriptor.device === 'connector' && device.connector?.id !== connectorId) {
      throw notFound(
        '/source/connectorId',
        connectorId,
        `connector ${connectorId} not found for this device`,
      );
    }
  }
  const referenced = sourceStateIds(source);
  if (referenced.length === 0) return;
  const rows = await loadStates(em, account.id, referenced);
  const seen = visible.restricted ? await visibleStates(em, referenced, visible) : null;
  const paths =
    descriptor?.reads === 'stateIds'
      ? referenced.map((_, i) => `/source/stateIds/${i}`)
      : ['/source/stateId'];
  referenced.forEach((id, i) => {
    if (id !== self.id && (!rows.has(id) || (seen && !seen.has(id))))
      throw notFound(paths[i]!, id, `state ${id} not found`);
  });
  const cycle = await findCycle(self, referenced, (ids) => loadStates(em, account.id, ids));
  if (cycle) {
    throw errors.unprocessable(
      'CIRCULAR_STATE_REFERENCE',
      cycle.length === 2
        ? 'A state cannot aggregate itself'
        : `Circular state reference: ${cycle.map((s) => s.key).join(' → ')}`,
      [{ location: 'body', path: '/source', cycle }],
    );
  }
}

/**
 * The path `self → … → self` when the states `self` would read lead back to it, else null.
 * Breadth first, so the cycle reported is a shortest one.
 */
export async function findCycle(
  self: StateRef,
  referenced: string[],
  load: (ids: string[]) => Promise<Map<string, StateRow>>,
): Promise<StateRef[] | null> {
  const via = new Map<string, string>();
  const known = new Map<string, StateRef>([[self.id, self]]);
  const pathTo = (id: string): StateRef[] => {
    const path: StateRef[] = [];
    for (let at: string | undefined = id; at !== undefined && at !== self.id; at = via.get(at)) {
      path.unshift(known.get(at)!);
    }
    return [self, ...path, self];
  };
  if (referenced.includes(self.id)) return [self, self];
  let frontier = [...new Set(referenced)];
  for (const id of frontier) via.set(id, self.id);
  while (frontier.length > 0) {
    const rows = await load(frontier);
    const next: string[] = [];
    for (const id of frontier) {
      const row = rows.get(id);
      if (!row) continue;
      known.set(id, { id: row.id, key: row.key, twinId: row.twinId });
      for (const ref of sourceStateIds(row.source)) {
        if (ref === self.id) return pathTo(id);
        if (via.has(ref)) continue;
        via.set(ref, id);
        next.push(ref);
      }
    }
    frontier = next;
  }
  return null;
}

/** Which of the states `ids` belong to twins the caller's permission scopes show. */
async function visibleStates(em: EntityManager, ids: string[], visible: ScopeFilter): Promise<Set<string>> {
  const scope = visible.sql('t.effective_permission_scope_id');
  const rows = await em
    .getConnection()
    .execute<Array<{ id: string }>>(
      `SELECT s.id FROM data_states s JOIN digital_twins t ON t.id = s.twin_id WHERE s.id IN (?) AND ${scope.sql}`,
      [ids, ...scope.params],
    );
  return new Set(rows.map((r) => r.id));
}

async function loadStates(
  em: EntityManager,
  accountId: string,
  ids: string[],
): Promise<Map<string, StateRow>> {
  if (ids.length === 0) return new Map();
  const rows = await em
    .getConnection()
    .execute<Array<{ id: string; key: string; twin_id: string; source: StateSource | null }>>(
      'SELECT id, key, twin_id, source FROM data_states WHERE account_id = ? AND id IN (?)',
      [accountId, ids],
    );
  return new Map(rows.map((r) => [r.id, { id: r.id, key: r.key, twinId: r.twin_id, source: r.source }]));
}

/** States of the account whose aggregate, time-aggregated or timeseries-aggregate source reads one of `stateIds` (at most 50). */
export async function statesAggregating(
  em: EntityManager,
  accountId: string,
  stateIds: string[],
  /** Leave out the states of this twin (they go along when the twin is deleted). */
  exceptTwinId: string | null = null,
): Promise<Array<StateRef & { reads: string[] }>> {
  if (stateIds.length === 0) return [];
  const rows = await em
    .getConnection()
    .execute<Array<{ id: string; key: string; twin_id: string; source: StateSource }>>(
      `SELECT s.id, s.key, s.twin_id, s.source FROM data_states s
      WHERE s.account_id = ? AND s.twin_id IS DISTINCT FROM ? AND s.source->>'type' IN (?)
        AND (s.source->>'stateId' IN (?)
          OR (jsonb_typeof(s.source->'stateIds') = 'array' AND EXISTS (
            SELECT 1 FROM jsonb_array_elements_text(s.source->'stateIds') AS e(id) WHERE e.id IN (?))))
      ORDER BY s.key, s.id LIMIT 50`,
      [accountId, exceptTwinId, AGGREGATING_SOURCE_TYPES, stateIds, stateIds],
    );
  const wanted = new Set(stateIds);
  return rows.map((r) => ({
    id: r.id,
    key: r.key,
    twinId: r.twin_id,
    reads: sourceStateIds(r.source).filter((id) => wanted.has(id)),
  }));
}

/** States fed through a connector source, by device or by connector. */
export async function connectorFedStates(
  em: EntityManager,
  by: { deviceId: string } | { connectorId: string },
): Promise<Array<StateRef & { accountId: string }>> {
  const [column, value] =
    'deviceId' in by ? ["source->>'deviceId'", by.deviceId] : ["source->>'connectorId'", by.connectorId];
  const rows = await em
    .getConnection()
    .execute<Array<{ id: string; key: string; twin_id: string; account_id: string }>>(
      `SELECT id, key, twin_id, account_id FROM data_states
        WHERE source->>'type' IN (?) AND ${column} = ? ORDER BY key, id LIMIT 200`,
      [CONNECTOR_FED_SOURCE_TYPES, value],
    );
  return rows.map((r) => ({ id: r.id, key: r.key, twinId: r.twin_id, accountId: r.account_id }));
}
