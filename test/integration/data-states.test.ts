import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../server/src/auth/principal.js';
import { DataStateService } from '../../server/src/states/data-state.service.js';
import { DirectStateValueSetter } from '../../server/src/states/direct-state-value-setter.js';
import { makeConnector } from './support/device-fixtures.js';
import {
  bearer,
  caller,
  errorCode,
  expectStatus,
  login,
  userWithPermissions,
  type ListBody,
} from './support/identity.js';
import { createTestApp, json, type TestApp } from './support/test-app.js';
import { insertTwin } from './support/twin-fixtures.js';

type State = Record<string, unknown> & { id: string; value: unknown; timestamp: string | null };
type Call = ReturnType<typeof caller>;

let t: TestApp;
let call: Call;
let twinId: string;
let otherTwinId: string;

/** Twins are made through the ORM: the twins API belongs to another domain. */
const makeTwin = (accountId: string, title = 'Pump station') => insertTwin(t, { accountId, title });

const addState = async (body: Record<string, unknown>, twin = twinId, as: Call = call) =>
  expectStatus<State>(await as('POST', `/xapi/v1/digital-twins/${twin}/states`, body), 201);
const put = (id: string, body: unknown, as: Call = call) => as('PUT', `/xapi/v1/states/${id}`, body);
const read = async (id: string) => expectStatus<State>(await call('GET', `/xapi/v1/states/${id}`), 200);
const details = (r: { body: string }) =>
  json<{ error: { details: Array<Record<string, unknown>> } }>(r as never).error.details;
const sum = (...stateIds: string[]) => ({ type: 'aggregate', operation: 'sum', stateIds });

beforeAll(async () => {
  t = await createTestApp();
  call = caller(t, bearer(await login(t)));
  twinId = await makeTwin(t.rootAccountId);
  otherTwinId = await makeTwin(t.rootAccountId, 'Tank');
}, 120_000);
afterAll(() => t?.close());

describe('data states', () => {
  it('creates, lists (paging, sort, search), reads, changes and deletes states', async () => {
    const twin = await makeTwin(t.rootAccountId);
    const flow = await addState({ key: 'flow', title: 'Flow', unit: 'm³/h' }, twin);
    expect(flow).toMatchObject({
      twinId: twin,
      accountId: t.rootAccountId,
      key: 'flow',
      title: 'Flow',
      valueType: 'number',
      unit: 'm³/h',
      source: null,
      meta: {},
      value: null,
      timestamp: null,
      warning: null,
    });
    await addState({ key: 'alpha', title: 'Zulu' }, twin);
    await addState({ key: 'level', title: 'Alpha' }, twin);
    const list = (query: string) => call('GET', `/xapi/v1/digital-twins/${twin}/states?${query}`);
    const keys = async (query: string) =>
      expectStatus<ListBody<State>>(await list(query), 200).data.map((s) => s.key);
    expect(await keys('')).toEqual(['alpha', 'flow', 'level']);
    expect(await keys('sort=-key')).toEqual(['level', 'flow', 'alpha']);
    expect(await keys('sort=title')).toEqual(['level', 'flow', 'alpha']);
    expect(await keys('searchItems=ALPH')).toEqual(['alpha', 'level']);
    const page = expectStatus<ListBody<State>>(await list('page=2&pageSize=2'), 200);
    expect(page.meta).toEqual({ page: 2, pageSize: 2, total: 3 });
    expect(page.data.map((s) => s.key)).toEqual(['level']);
    expect(expectStatus<ListBody<State>>(await list('page=9'), 200).data).toEqual([]);
    expect(errorCode(await list('sort=value'))).toBe('VALIDATION_ERROR');

    const changed = expectStatus<State>(await put(flow.id, { title: 'Inflow', unit: null }), 200);
    expect(changed).toMatchObject({ key: 'flow', title: 'Inflow', unit: null });
    expectStatus(await call('DELETE', `/xapi/v1/states/${flow.id}`), 204);
    expect((await call('GET', `/xapi/v1/states/${flow.id}`)).statusCode).toBe(404);
  });

  it('refuses a duplicate key within a twin with the exact message, also when racing, but not across twins', async () => {
    await addState({ key: 'pressure' });
    const duplicate = await call('POST', `/xapi/v1/digital-twins/${twinId}/states`, { key: 'pressure' });
    expect(duplicate.statusCode).toBe(409);
    expect(json(duplicate)).toEqual({
      error: {
        code: 'DUPLICATE_STATE_KEY',
        message: 'duplicate usage of state-key',
        details: expect.any(Array) as unknown[],
      },
    });
    await addState({ key: 'pressure' }, otherTwinId);
    const other = await addState({ key: 'pressure-2' });
    const renamed = await put(other.id, { key: 'pressure' });
    expect(renamed.statusCode).toBe(409);
    expect(json<{ error: { message: string } }>(renamed).error.message).toBe('duplicate usage of state-key');

    const racers = await Promise.all(
      Array.from({ length: 6 }, () =>
        call('POST', `/xapi/v1/digital-twins/${twinId}/states`, { key: 'raced' }),
      ),
    );
    expect(racers.filter((r) => r.statusCode === 201)).toHaveLength(1);
    for (const r of racers.filter((r) => r.statusCode !== 201)) {
      expect(r.statusCode, r.body).toBe(409);
      expect(json<{ error: { message: string } }>(r).error.message).toBe('duplicate usage of state-key');
    }
  });

  it('accepts a payload exactly as read back, keeping value and timestamp; stores visual types canonical', async () => {
    const state = await addState({
      key: 'chart',
      meta: { visual: { type: 'lineChart', yAxis: { min: 0, max: 0, unit: 'bar' } }, order: 3 },
    });
    expect(state.meta).toEqual({
      visual: { type: 'line-chart', yAxis: { min: 0, max: 0, unit: 'bar' } },
      order: 3,
    });
    const first = expectStatus<State>(await put(state.id, { value: 4.5 }), 200);
    expect(first.value).toBe(4.5);
    expect(first.timestamp).not.toBeNull();

    const readBack = await read(state.id);
    const again = expectStatus<State>(await put(state.id, readBack), 200);
    expect(again).toMatchObject({ value: 4.5, timestamp: first.timestamp, meta: readBack.meta });
    const same = expectStatus<State>(await put(state.id, { value: 4.5 }), 200);
    expect(same.timestamp).toBe(first.timestamp);
    const next = expectStatus<State>(await put(state.id, { value: 5 }), 200);
    expect(next.value).toBe(5);
    expect(next.timestamp).not.toBe(first.timestamp);

    for (const type of [
      'line_chart',
      'Line Chart',
      'gauge',
      'twinButton',
      'raw-values',
      'map_values',
      'donut',
      'boolean',
    ]) {
      const r = expectStatus<State>(await put(state.id, { meta: { visual: { type } } }), 200);
      expect(r.meta).toEqual({ visual: { type: expect.stringMatching(/^[a-z]+(-[a-z]+)?$/) as string } });
      expectStatus(await put(state.id, await read(state.id)), 200);
    }
    const bad = await put(state.id, { meta: { visual: { type: 'pie' } } });
    expect(errorCode(bad)).toBe('VALIDATION_ERROR');
    expect(details(bad)[0]).toMatchObject({ path: '/meta/visual/type' });
    const axis = await put(state.id, { meta: { visual: { type: 'line-chart', yAxis: { min: 5, max: 1 } } } });
    expect(details(axis)[0]).toMatchObject({ path: '/meta/visual/yAxis/min' });
  });

  it('keeps a value that does not fit the value type and shows a warning until a fitting value comes', async () => {
    const state = await addState({ key: 'count', valueType: 'integer' });
    const odd = expectStatus<State>(await put(state.id, { value: 1.5 }), 200);
    expect(odd).toMatchObject({ value: 1.5, warning: expect.stringMatching(/does not fit/) as string });
    expect((await read(state.id)).warning).toMatch(/does not fit/);
    expect(expectStatus<State>(await put(state.id, { value: 2 }), 200).warning).toBeNull();
    const text = expectStatus<State>(await put(state.id, { valueType: 'number', value: 'abc' }), 200);
    expect(text).toMatchObject({ value: 'abc', warning: expect.stringMatching(/number/) as string });
    expect(expectStatus<State>(await put(state.id, { valueType: 'string' }), 200).warning).toBeNull();
  });

  it('sets values only where nothing computes them; a boolean source starts at its initial value', async () => {
    const button = await addState({ key: 'pump-on', source: { type: 'boolean', initial: true } });
    expect(button).toMatchObject({ valueType: 'boolean', value: true });
    expect(expectStatus<State>(await put(button.id, { value: false }), 200).value).toBe(false);
    expect(
      (await addState({ key: 'pump-off', source: { type: 'boolean' }, valueType: 'integer' })).value,
    ).toBe(false);

    const random = await addState({
      key: 'noise',
      source: { type: 'random', min: 0, max: 1, intervalSeconds: 5 },
    });
    const refused = await put(random.id, { value: 3 });
    expect(refused.statusCode).toBe(409);
    expect(errorCode(refused)).toBe('STATE_VALUE_COMPUTED');
    const create = await call('POST', `/xapi/v1/digital-twins/${twinId}/states`, {
      key: 'noise-2',
      source: { type: 'dynamic-routing', stateKey: 'x' },
      value: 1,
    });
    expect(errorCode(create)).toBe('STATE_VALUE_COMPUTED');
    // The engine moved on after the read: the read-back payload's older value is not a new value.
    const readBack = await read(random.id);
    await t.orm.em.getConnection().execute(`UPDATE data_states SET value = '0.7' WHERE id = ?`, [random.id]);
    const roundTrip = expectStatus<State>(await put(random.id, { ...readBack, title: 'Noise' }), 200);
    expect(roundTrip).toMatchObject({ title: 'Noise', value: 0.7 });
  });

  it('checks every source type and names the path of what is wrong', async () => {
    const target = await addState({ key: 'target' });
    const connectorId = await makeConnector(t, t.rootAccountId);
    const device = expectStatus<{ id: string }>(
      await call('POST', '/xapi/v1/virtual-devices', { device_id: 'src-1', title: 'Meter', connectorId }),
      201,
    );
    const valid = [
      { type: 'connector', connectorId, deviceId: device.id, stateKey: '_parsed' },
      { type: 'dynamic-routing', stateKey: 'temperature' },
      sum(target.id),
      { type: 'aggregate', operation: 'difference', stateIds: [target.id] },
      { type: 'time-aggregated', stateId: target.id, operation: 'count', period: 'previous-week' },
      {
        type: 'timeseries-aggregate',
        stateId: target.id,
        operation: 'mean',
        windowSeconds: 3600,
        intervalSeconds: 60,
      },
      { type: 'random', min: 1, max: 1, intervalSeconds: 1, decimals: 2 },
      { type: 'boolean', initial: false },
      { type: 'hub', deviceId: device.id, stateKey: 'battery' },
    ];
    for (const [i, source] of valid.entries()) {
      expect((await addState({ key: `valid-${i}`, source })).source).toEqual(source);
    }
    const refusal = async (source: unknown) => {
      const r = await call('POST', `/xapi/v1/digital-twins/${twinId}/states`, { key: 'invalid', source });
      expect(r.statusCode, r.body).toBe(400);
      expect(errorCode(r)).toBe('VALIDATION_ERROR');
      return details(r).map((d) => d.path);
    };
    const missing = '0190e4c4-0000-7000-8000-00000000dead';
    expect(await refusal({ type: 'unknown' })).toEqual(['/source/type']);
    expect(await refusal({ type: 'random', min: 2, max: 1, intervalSeconds: 1 })).toEqual(['/source/min']);
    expect(await refusal({ type: 'random', min: 0, max: 1, intervalSeconds: 0 })).toEqual([
      '/source/intervalSeconds',
    ]);
    const second = await addState({ key: 'second' });
    expect(
      await refusal({ type: 'aggregate', operation: 'difference', stateIds: [target.id, second.id] }),
    ).toEqual(['/source/stateIds']);
    expect(
      await refusal({ type: 'time-aggregated', stateId: target.id, operation: 'sum', period: 'decade' }),
    ).toContain('/source/period');
    expect(await refusal(sum(target.id, missing))).toEqual(['/source/stateIds/1']);
    expect(
      await refusal({ type: 'connector', connectorId: missing, deviceId: device.id, stateKey: 'x' }),
    ).toEqual(['/source/connectorId']);
    expect(await refusal({ type: 'hub', deviceId: missing, stateKey: 'x' })).toEqual(['/source/deviceId']);
  });

  it('hands values to the state engine only when they change, and tells it about definition changes', async () => {
    const direct = new DirectStateValueSetter(t.ctx.em);
    const calls: string[] = [];
    const service = new DataStateService(
      t.ctx.em,
      {
        setValue: async (id, value, time) => {
          calls.push(`set ${JSON.stringify(value)}`);
          return direct.setValue(id, value, time);
        },
        definitionsChanged: (twin) => calls.push(`definitions ${twin === twinId ? 'twin' : twin}`),
      },
      () => new Date(),
    );
    const root: Principal = {
      kind: 'user',
      id: 'root',
      userId: null,
      apiKeyId: null,
      accountId: t.rootAccountId,
      permissions: new Set(),
      permissionScopeIds: null,
      sessionId: null,
    };
    const run = <T>(fn: () => Promise<T>) => t.withContext(fn);
    const state = await run(() => service.create(root, twinId, { key: 'engine', value: 1 }));
    await run(() => service.update(root, state.id, { value: 1, title: 'Same value' }));
    await run(() => service.update(root, state.id, { value: 2 }));
    await run(() => service.update(root, state.id, { key: 'engine-2' }));
    const user = await run(() =>
      service.create(root, otherTwinId, { key: 'engine-sum', source: sum(state.id) }),
    );
    const twin = await run(() => service.twin(root, twinId));
    expect(await run(() => service.twinDeletionBlockers(twin))).toEqual([
      { type: 'state', id: user.id, key: 'engine-sum', twinId: otherTwinId, aggregates: [state.id] },
    ]);
    await run(() => service.delete(root, user.id));
    await run(() => service.delete(root, state.id));
    expect(calls).toEqual([
      'definitions twin',
      'set 1',
      'set 2',
      'definitions twin',
      `definitions ${otherTwinId}`,
      // An aggregate starts from its sources' current values.
      'set 2',
      `definitions ${otherTwinId}`,
      'definitions twin',
    ]);
  });

  it('refuses circular aggregations at save: itself, A → B → A, and longer cycles through every aggregating type', async () => {
    const a = await addState({ key: 'cycle-a' });
    const self = await put(a.id, { source: sum(a.id) });
    expect(self.statusCode).toBe(422);
    expect(errorCode(self)).toBe('CIRCULAR_STATE_REFERENCE');
    const b = await addState({ key: 'cycle-b', source: sum(a.id) }, otherTwinId);
    const back = await put(a.id, {
      source: { type: 'time-aggregated', stateId: b.id, operation: 'sum', period: 'day' },
    });
    expect(back.statusCode).toBe(422);
    expect(errorCode(back)).toBe('CIRCULAR_STATE_REFERENCE');
    expect((details(back)[0]!.cycle as Array<{ id: string }>).map((s) => s.id)).toEqual([a.id, b.id, a.id]);
    const c = await addState({
      key: 'cycle-c',
      source: {
        type: 'timeseries-aggregate',
        stateId: b.id,
        operation: 'max',
        windowSeconds: 60,
        intervalSeconds: 60,
      },
    });
    const long = await put(a.id, { source: { type: 'aggregate', operation: 'mean', stateIds: [c.id] } });
    expect(errorCode(long)).toBe('CIRCULAR_STATE_REFERENCE');
    expect((details(long)[0]!.cycle as Array<{ key: string }>).map((s) => s.key)).toEqual([
      'cycle-a',
      'cycle-c',
      'cycle-b',
      'cycle-a',
    ]);
    expect((await read(a.id)).source).toBeNull();
  });

  it('keeps tenants apart: other accounts’ twins, states, devices and states in sources are not found', async () => {
    const account = async (title: string) =>
      expectStatus<{ id: string }>(
        await call('POST', '/xapi/v1/accounts', { title, parentId: t.rootAccountId }),
        201,
      ).id;
    const mine = await account('Mine');
    const theirs = await account('Theirs');
    const user = await userWithPermissions(t, bearer(await login(t)), 'State manager', ['state.manage'], {
      accountId: mine,
    });
    const as = caller(t, bearer(user.token));
    const myTwin = await makeTwin(mine);
    const theirTwin = await makeTwin(theirs);
    const theirState = await addState({ key: 'secret' }, theirTwin);
    const theirDevice = expectStatus<{ id: string }>(
      await call('POST', '/xapi/v1/virtual-devices', { device_id: 'theirs', title: 'T', accountId: theirs }),
      201,
    );
    const mineState = await addState({ key: 'own' }, myTwin, as);

    for (const [method, url] of [
      ['GET', `/xapi/v1/digital-twins/${theirTwin}/states`],
      ['POST', `/xapi/v1/digital-twins/${theirTwin}/states`],
      ['GET', `/xapi/v1/states/${theirState.id}`],
      ['PUT', `/xapi/v1/states/${theirState.id}`],
      ['DELETE', `/xapi/v1/states/${theirState.id}`],
    ] as const) {
      const r = await as(method, url, method === 'GET' || method === 'DELETE' ? undefined : { key: 'probe' });
      expect(r.statusCode, `${method} ${url}`).toBe(404);
    }
    const foreignState = await put(mineState.id, { source: sum(theirState.id) }, as);
    expect(foreignState.statusCode).toBe(400);
    expect(details(foreignState)[0]).toMatchObject({
      path: '/source/stateIds/0',
      message: expect.stringMatching(/not found/) as string,
    });
    const foreignDevice = await put(
      mineState.id,
      { source: { type: 'hub', deviceId: theirDevice.id, stateKey: 'x' } },
      as,
    );
    expect(details(foreignDevice)[0]).toMatchObject({ path: '/source/deviceId' });

    const reader = await userWithPermissions(t, bearer(await login(t)), 'State reader', ['state.read'], {
      accountId: mine,
    });
    const readOnly = caller(t, bearer(reader.token));
    expectStatus(await readOnly('GET', `/xapi/v1/states/${mineState.id}`), 200);
    expect((await readOnly('PUT', `/xapi/v1/states/${mineState.id}`, { title: 'x' })).statusCode).toBe(403);
  });
});
