import { isDeepStrictEqual } from 'node:util';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import { canReach } from '../accounts/account.service.js';
import { deviceStateQueries, type CurrentDeviceValue } from '../devices/device-state.queries.js';
import type { VirtualDevice } from '../devices/virtual-device.entity.js';
import { errors } from '../platform/errors.js';
import { problem } from '../platform/http/problem-detail.js';
import { likePattern, listResult, type ListParams, type ListResult } from '../platform/http/list.js';
import { scopeFilter } from '../permission-scopes/scope-filter.js';
import { DigitalTwin } from '../twins/digital-twin.entity.js';
import { DataState, type StateValueType } from './data-state.entity.js';
import { normaliseMeta, type MetaInput } from './state-meta.js';
import { checkSourceReferences, connectorFedStates, statesAggregating } from './state-references.js';
import { parseStateSource } from './state-source.schemas.js';
import { computedBy, sourceDescriptor } from './sources/index.js';
import type { StateSource } from './state-source.js';
import type { SetValueOptions, StateValueSetter } from './state-value-setter.js';
// The engine's rule, so a value set here and one computed there get the same warning.
import { aggregateOf } from './engine/aggregate.js';
import { valueWarning } from './engine/state-values.js';

export const DATA_STATE_SORTABLE = ['key', 'title', 'createdAt', 'updatedAt'] as const;

export interface DataStateInput {
  key?: string;
  title?: string;
  valueType?: StateValueType;
  unit?: string | null;
  source?: unknown;
  meta?: MetaInput;
  value?: unknown;
  /** Read-only field of a read-back payload: marks `value` as read back, not as a new value. */
  timestamp?: unknown;
}

const duplicateKey = (key: string) =>
  errors.conflict('DUPLICATE_STATE_KEY', 'duplicate usage of state-key', [
    { ...problem('/key', 'unique', { value: key }), key },
  ]);

/** Sources whose value users and rules set; every other source computes its value. */
const settable = (source: StateSource | null) =>
  source === null || sourceDescriptor(source.type)?.settable === true;

/** The fields the state engine cares about; a change of any of them is a definition change. */
const definition = (s: DataState) => ({ key: s.key, valueType: s.valueType, source: s.source });

/**
 * Data states of digital twins. Callers have checked state.read / state.manage; here the twin's
 * account must be reachable and the twin visible through the caller's permission scopes (its
 * effective scope, twins/twin-scopes.ts; 404 otherwise). Values are set through the state engine
 * (StateValueSetter) so dependants, the time series and live views follow; definitions are
 * checked here: unique keys, sources and their references, no aggregation cycles.
 */
export class DataStateService {
  constructor(
    private readonly em: () => EntityManager,
    private readonly values: StateValueSetter,
    private readonly clock: () => Date,
  ) {}

  async twin(principal: Principal, twinId: string): Promise<DigitalTwin> {
    const notFound = () => errors.notFound('Digital twin', twinId);
    const twin = await this.em().findOne(DigitalTwin, { id: twinId }, { populate: ['account'] });
    if (!twin || !canReach(principal, twin.account)) throw notFound();
    scopeFilter(principal).assertVisible(twin.effectivePermissionScope?.id, notFound);
    return twin;
  }

  async list(principal: Principal, twinId: string, params: ListParams): Promise<ListResult<DataState>> {
    const twin = await this.twin(principal, twinId);
    const pattern = params.search ? likePattern(params.search) : undefined;
    const where = pattern
      ? { twin, $or: [{ key: { $ilike: pattern } }, { title: { $ilike: pattern } }] }
      : { twin };
    const [rows, total] = await this.em().findAndCount(DataState, where, {
      orderBy: [...params.orderBy.map((o) => ({ [o.field]: o.direction })), { id: 'asc' }],
      limit: params.pageSize,
      offset: params.offset,
    });
    return listResult(rows, total, params);
  }

  async get(principal: Principal, id: string): Promise<DataState> {
    const notFound = () => errors.notFound('State', id);
    const state = await this.em().findOne(DataState, { id }, { populate: ['account', 'twin'] });
    if (!state || !canReach(principal, state.account)) throw notFound();
    scopeFilter(principal).assertVisible(state.twin.effectivePermissionScope?.id, notFound);
    return state;
  }

  async create(
    principal: Principal,
    twinId: string,
    input: DataStateInput & { key: string },
  ): Promise<DataState> {
    const twin = await this.twin(principal, twinId);
    const state = new DataState();
    state.twin = twin;
    state.account = twin.account;
    // A source that holds one value type (boolean) says so unless the caller says otherwise.
    const source = parseStateSource(input.source);
    const valueType = source ? sourceDescriptor(source.type)?.valueType : undefined;
    if (input.valueType === undefined && valueType) input = { ...input, valueType };
    await this.apply(principal, state, input);
    const initial = this.initialValue(state, input) ?? (await this.aggregateStart(state));
    const fromDevice = initial === undefined ? await this.deviceStart(state) : undefined;
    await this.save(state, () => this.em().persist(state));
    this.values.definitionsChanged(twin.id);
    // A packet routed to the new state meanwhile is newer: the start value then yields to it.
    if (fromDevice)
      return this.setValue(state, fromDevice.value, fromDevice.timestamp, { unlessNewer: true });
    return initial === undefined ? state : this.setValue(state, initial);
  }

  /** A payload read back from GET is accepted as is; an unchanged value leaves value and timestamp. */
  async update(principal: Principal, id: string, input: DataStateInput): Promise<DataState> {
    const state = await this.get(principal, id);
    const before = definition(state);
    await this.apply(principal, state, input);
    const write = this.valueWrite(state, input);
    const redefined = !isDeepStrictEqual(before, definition(state));
    const start = !write && redefined ? await this.aggregateStart(state) : undefined;
    await this.save(state);
    if (redefined) this.values.definitionsChanged(state.twin.id);
    if (write) return this.setValue(state, input.value);
    return start === undefined ? state : this.setValue(state, start);
  }

  async delete(principal: Principal, id: string): Promise<void> {
    const state = await this.get(principal, id);
    const users = await statesAggregating(this.em(), state.account.id, [state.id]);
    if (users.length > 0) {
      throw errors.deleteBlocked(
        'Other states aggregate this state',
        users.map((u) => ({ type: 'state', id: u.id, key: u.key, twinId: u.twinId })),
      );
    }
    const twinId = state.twin.id;
    await this.em().removeAndFlush(state);
    this.values.definitionsChanged(twinId);
  }

  /**
   * A device guard (VirtualDeviceService.deletionGuards): the device may not go while a state fed
   * by it (connector source) is read by an aggregation.
   */
  async deviceDeletionBlockers(device: VirtualDevice): Promise<unknown[]> {
    // Connector sources name devices of their own account only (checkSourceReferences).
    const fed = await connectorFedStates(this.em(), { deviceId: device.id });
    const users = await statesAggregating(
      this.em(),
      device.account.id,
      fed.map((s) => s.id),
    );
    return users.map((u) => ({ type: 'state', id: u.id, key: u.key, twinId: u.twinId, aggregates: u.reads }));
  }

  /** For deleting a twin (its states go with it): states of other twins that aggregate them. */
  async twinDeletionBlockers(twin: DigitalTwin): Promise<unknown[]> {
    const own = await this.em().find(DataState, { twin }, { fields: ['id'] });
    const ids = own.map((s) => s.id);
    const users = await statesAggregating(this.em(), twin.account.id, ids, twin.id);
    return users.map((u) => ({ type: 'state', id: u.id, key: u.key, twinId: u.twinId, aggregates: u.reads }));
  }

  /** A connector guard: a connector linked to a twin (a state with a connector source on it) stays. */
  async connectorDeletionBlockers(connectorId: string): Promise<unknown[]> {
    const fed = await connectorFedStates(this.em(), { connectorId });
    return fed.map((s) => ({ type: 'state', id: s.id, key: s.key, twinId: s.twinId }));
  }

  /**
   * Checks first and changes the entity last: a query after a change would auto-flush it, and a
   * taken key would then fail outside `save`.
   */
  private async apply(principal: Principal, state: DataState, input: DataStateInput): Promise<void> {
    const key = input.key === undefined ? state.key : input.key.trim();
    if (!key)
      throw errors.validation('key is required', [{ location: 'body', ...problem('/key', 'required') }]);
    if (key !== state.key || !state.key) {
      const taken = await this.em().count(DataState, { twin: state.twin, key, id: { $ne: state.id } });
      if (taken > 0) throw duplicateKey(key);
    }
    const meta = input.meta === undefined ? state.meta : normaliseMeta(input.meta);
    const source = input.source === undefined ? state.source : parseStateSource(input.source);
    if (input.source !== undefined && source) {
      const self = { id: state.id, key, twinId: state.twin.id };
      // A new source may read only what the caller sees; a kept one (a read-back PUT) is not re-judged.
      const changed = !isDeepStrictEqual(source, state.source);
      const visible = scopeFilter(changed ? principal : { permissionScopeIds: null });
      await checkSourceReferences(this.em(), state.account, self, source, visible);
    }
    state.key = key;
    state.meta = meta;
    if (input.title !== undefined) state.title = input.title.trim();
    if (input.valueType !== undefined) state.valueType = input.valueType;
    if (input.unit !== undefined) state.unit = input.unit?.trim() || null;
    if (!isDeepStrictEqual(source, state.source)) {
      state.source = source;
      // The engine's running figures belong to the old source.
      state.engine = {};
    }
    state.warning = valueWarning(state.value, state.valueType);
  }

  /** Flushes; a key taken by a concurrent request is the same DUPLICATE_STATE_KEY as a checked one. */
  private async save(state: DataState, before?: () => void): Promise<void> {
    try {
      before?.();
      await this.em().flush();
    } catch (error) {
      if (error instanceof UniqueConstraintViolationException) throw duplicateKey(state.key);
      throw error;
    }
  }

  /** The value a new state starts with: the one sent, or a boolean source's `initial`. */
  /**
   * An aggregate's value from its sources' current values when it is created or redefined: the
   * engine recomputes it only when a source changes, and sources that already hold values would
   * otherwise leave it empty until then. (A difference needs two received values: it starts empty.)
   */
  private async aggregateStart(state: DataState): Promise<number | undefined> {
    const source = state.source;
    if (!computedBy(source, 'states') || source.operation === 'difference') return undefined;
    const sources = await this.em().find(
      DataState,
      { id: { $in: source.stateIds }, account: state.account },
      { fields: ['id', 'value'] },
    );
    const values = new Map(sources.map((s) => [s.id, s.value]));
    const value = aggregateOf(
      source.operation,
      source.stateIds.map((id) => values.get(id) ?? null),
    );
    return value ?? undefined;
  }

  /**
   * A state fed by devices starts from the device's current value: the engine routes only new
   * packets, and a quiet device would otherwise leave the new state empty until it sends again.
   * The value keeps the device state's timestamp (when it was measured, not when the state was made).
   */
  private async deviceStart(state: DataState): Promise<CurrentDeviceValue | undefined> {
    const source = state.source;
    const routing = source ? sourceDescriptor(source.type)?.routing : undefined;
    if (!source || !routing) return undefined;
    const { stateKey, deviceId } = source as { stateKey: string; deviceId?: string };
    if (routing === 'device' && deviceId) return deviceStateQueries.ofDevice(this.em(), deviceId, stateKey);
    if (routing === 'reference' && state.twin.referenceId) {
      return deviceStateQueries.ofReference(this.em(), state.account.id, state.twin.referenceId, stateKey);
    }
    return undefined;
  }

  private initialValue(state: DataState, input: DataStateInput): unknown {
    if (input.value !== undefined && input.value !== null) {
      if (!settable(state.source)) throw computed(state.source!);
      return input.value;
    }
    return state.source ? sourceDescriptor(state.source.type)?.initial?.(state.source) : undefined;
  }

  /**
   * Whether the PUT's `value` is to be written. An unchanged value is not (spec). A computed
   * source refuses a new value, except in a read-back payload (it carries `timestamp`): there the
   * value is only what the engine had computed when it was read.
   */
  private valueWrite(state: DataState, input: DataStateInput): boolean {
    if (input.value === undefined || isDeepStrictEqual(input.value, state.value)) return false;
    if (settable(state.source)) return true;
    if (input.timestamp !== undefined) return false;
    throw computed(state.source!);
  }

  private async setValue(
    state: DataState,
    value: unknown,
    at = this.clock(),
    options?: SetValueOptions,
  ): Promise<DataState> {
    await this.values.setValue(state.id, value, at, options);
    const fresh = await this.em().findOneOrFail(
      DataState,
      { id: state.id },
      { populate: ['account', 'twin'], refresh: true },
    );
    const warning = valueWarning(fresh.value, fresh.valueType);
    if (warning !== fresh.warning) {
      fresh.warning = warning;
      await this.em().flush();
    }
    return fresh;
  }
}

const computed = (source: StateSource) =>
  errors.conflict(
    'STATE_VALUE_COMPUTED',
    `The value of a state with a ${source.type} source is computed and cannot be set`,
    [{ location: 'body', path: '/value', sourceType: source.type }],
  );
