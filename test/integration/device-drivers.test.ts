import { encode } from 'cbor-x';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Account } from '../../server/src/accounts/account.entity.js';
import { DeviceDriver } from '../../server/src/drivers/device-driver.entity.js';
import { DeviceTemplate } from '../../server/src/templates/device-template.entity.js';
import {
  bearer,
  caller,
  errorCode,
  expectStatus,
  login,
  userWithPermissions,
  type Credentials,
  type ListBody,
} from './support/identity.js';
import { createTestApp, type TestApp } from './support/test-app.js';

interface DriverBody {
  id: string;
  accountId: string;
  title: string;
  description: string;
  shared: boolean;
  parser: { type: string; [setting: string]: unknown };
  targetVariables: Array<{ key: string; type: string; unit?: string; description?: string }>;
  healthConfig: { rules: Array<Record<string, unknown>>; silentAfterSeconds?: number };
  createdAt: string;
  updatedAt: string;
}
interface ErrorBody {
  error: { code: string; message: string; details: Array<Record<string, unknown>> };
}
interface TestReply {
  values: Array<Record<string, unknown>>;
  warnings: string[];
}

let t: TestApp;
let admin: Credentials;
let call: ReturnType<typeof caller>;
/** root ─┬─ plant ─ hall
 *        └─ other */
let plant: string;
let hall: string;
let other: string;

const BINARY = {
  type: 'binary',
  fields: [
    { key: 'flow', offset: 0, type: 'uint16', endian: 'big', scale: 0.1 },
    { key: 'temperature', offset: 2, type: 'int16', endian: 'little', scale: 0.01 },
    { key: 'open', offset: 4, type: 'bool', bit: 0 },
  ],
};
const VARIABLES = [
  { key: 'flow', type: 'number', unit: 'm³/h', description: 'Volume flow' },
  { key: 'temperature', type: 'number', unit: '°C' },
  { key: 'open', type: 'boolean' },
];

const createDriver = async (body: Record<string, unknown>, as = call) =>
  expectStatus<DriverBody>(await as('POST', '/xapi/v1/device-drivers', body), 201);

beforeAll(async () => {
  t = await createTestApp();
  admin = bearer(await login(t));
  call = caller(t, admin);
  const account = async (title: string, parentId?: string) =>
    expectStatus<{ id: string }>(
      await call('POST', '/xapi/v1/accounts', { title, ...(parentId ? { parentId } : {}) }),
      201,
    ).id;
  plant = await account('Plant');
  hall = await account('Hall', plant);
  other = await account('Other');
});
afterAll(() => t?.close());

describe('device driver CRUD', () => {
  it('creates, reads, lists, changes and deletes a driver', async () => {
    const created = await createDriver({
      title: 'Flow meter FM-2',
      description: 'Binary uplink',
      parser: BINARY,
      targetVariables: VARIABLES,
      healthConfig: {
        rules: [{ state: 'flow', operator: '>', value: 90, result: 'Warning' }],
        silentAfterSeconds: 3600,
      },
      accountId: plant,
    });
    expect(created).toMatchObject({
      accountId: plant,
      title: 'Flow meter FM-2',
      shared: false,
      parser: BINARY,
      targetVariables: VARIABLES,
      healthConfig: {
        rules: [{ state: 'flow', operator: '>', value: 90, result: 'Warning' }],
        silentAfterSeconds: 3600,
      },
    });
    expect(expectStatus<DriverBody>(await call('GET', `/xapi/v1/device-drivers/${created.id}`), 200)).toEqual(
      created,
    );

    const changed = expectStatus<DriverBody>(
      await call('PUT', `/xapi/v1/device-drivers/${created.id}`, { title: 'Flow meter FM-3', shared: true }),
      200,
    );
    expect(changed).toMatchObject({ title: 'Flow meter FM-3', shared: true, parser: BINARY });
    expect(Date.parse(changed.updatedAt)).toBeGreaterThanOrEqual(Date.parse(created.updatedAt));

    expectStatus(await call('DELETE', `/xapi/v1/device-drivers/${created.id}`), 204);
    expect(errorCode(await call('GET', `/xapi/v1/device-drivers/${created.id}`))).toBe('NOT_FOUND');
  });

  it('defaults to the JSON parser and lists with paging, sort and case-insensitive search', async () => {
    const account = expectStatus<{ id: string }>(
      await call('POST', '/xapi/v1/accounts', { title: 'Listing' }),
      201,
    ).id;
    for (const title of ['Beta sensor', 'alpha sensor', 'Gamma meter'])
      await createDriver({ title, accountId: account });
    const list = (query: string) =>
      call('GET', `/xapi/v1/device-drivers?accountId=${account}&${query}`).then((r) =>
        expectStatus<ListBody<DriverBody>>(r, 200),
      );
    const all = await list('sort=title');
    expect(all.data.map((d) => d.title)).toEqual(['alpha sensor', 'Beta sensor', 'Gamma meter']);
    expect(all.data[0]!.parser).toEqual({ type: 'json' });
    expect((await list('sort=-title&pageSize=2&page=1')).data.map((d) => d.title)).toEqual([
      'Gamma meter',
      'Beta sensor',
    ]);
    const last = await list('sort=-title&pageSize=2&page=2');
    expect(last.data.map((d) => d.title)).toEqual(['alpha sensor']);
    expect(last.meta).toEqual({ page: 2, pageSize: 2, total: 3 });
    expect((await list('pageSize=2&page=9')).data).toEqual([]);
    expect((await list('searchItems=SENSOR')).meta.total).toBe(2);
    expect(errorCode(await call('GET', `/xapi/v1/device-drivers?sort=parser`))).toBe('VALIDATION_ERROR');
  });

  it('checks permissions: deviceDriver.read reads, deviceDriver.manage changes', async () => {
    const reader = await userWithPermissions(t, admin, 'Driver reader', ['deviceDriver.read'], {
      accountId: plant,
    });
    const asReader = caller(t, bearer(reader.token));
    const driver = await createDriver({ title: 'Readable', accountId: plant });
    expectStatus(await asReader('GET', `/xapi/v1/device-drivers/${driver.id}`), 200);
    expectStatus(await asReader('GET', '/xapi/v1/device-drivers'), 200);
    expectStatus(
      await asReader('POST', `/xapi/v1/device-drivers/${driver.id}/test`, { payload: { json: { a: 1 } } }),
      200,
    );
    const refused = await asReader('POST', '/xapi/v1/device-drivers', { title: 'Nope' });
    expect(refused.statusCode).toBe(403);
    expect(errorCode(refused)).toBe('NO_PERMISSION_DEVICEDRIVER.MANAGE');
    expect(errorCode(await asReader('PUT', `/xapi/v1/device-drivers/${driver.id}`, { title: 'x' }))).toBe(
      'NO_PERMISSION_DEVICEDRIVER.MANAGE',
    );
    expect(
      errorCode(
        await asReader('POST', '/xapi/v1/device-drivers/test', {
          parser: { type: 'json' },
          payload: { json: {} },
        }),
      ),
    ).toBe('NO_PERMISSION_DEVICEDRIVER.MANAGE');
  });

  it('refuses invalid parser settings with 422 INVALID_PARSER_CONFIG naming each problem', async () => {
    const refuse = async (parser: unknown) => {
      const response = await call('POST', '/xapi/v1/device-drivers', { title: 'Bad', parser });
      return expectStatus<ErrorBody>(response, 422).error;
    };
    expect(await refuse({ type: 'xml' })).toMatchObject({
      code: 'INVALID_PARSER_CONFIG',
      details: [{ path: '/parser/type' }],
    });
    const binary = await refuse({
      type: 'binary',
      fields: [
        { key: 'a', offset: -1, type: 'uint8' },
        { key: 'a', offset: 0, type: 'uint12' },
      ],
    });
    expect(binary.details).toMatchObject([
      {
        path: '/parser/fields/0/offset',
        keyword: 'minimum',
        message: 'offset must be an integer from 0 to 65535',
      },
      { path: '/parser/fields/1/key', keyword: 'unique', message: 'duplicate key "a"' },
      {
        path: '/parser/fields/1/type',
        keyword: 'enum',
        message: expect.stringMatching(/unknown type "uint12"/) as string,
      },
    ]);
    expect((await refuse({ type: 'javascript', code: 'function parse( {' })).message).toMatch(/SyntaxError/);
    expect((await refuse({ type: 'javascript', code: 'var x = 1;' })).message).toMatch(
      /must define function parse/,
    );
    expect(
      (await refuse({ type: 'javascript', code: 'function parse() {}', timeoutMs: 60000 })).details,
    ).toMatchObject([
      {
        path: '/parser/timeoutMs',
        keyword: 'maximum',
        params: { limit: 1000 },
        message: 'timeoutMs must be an integer from 1 to 1000',
      },
    ]);
    const duplicate = await call('POST', '/xapi/v1/device-drivers', {
      title: 'Dup',
      targetVariables: [
        { key: 'a', type: 'number' },
        { key: 'a', type: 'string' },
      ],
    });
    expect(errorCode(duplicate)).toBe('VALIDATION_ERROR');
    expect(
      errorCode(
        await call('POST', '/xapi/v1/device-drivers', {
          title: 'R',
          targetVariables: [{ key: '_raw', type: 'string' }],
        }),
      ),
    ).toBe('VALIDATION_ERROR');
  });
});

describe('health configuration', () => {
  const withRules = (rules: unknown[]) =>
    call('POST', '/xapi/v1/device-drivers', {
      title: 'Health',
      targetVariables: VARIABLES,
      healthConfig: { rules },
    });

  it.each([
    [
      'a state that is no target variable',
      { state: 'pressure', operator: '>', value: 1, result: 'Warning' },
      '/rules/0/state',
    ],
    [
      'an operator that does not fit a number',
      { state: 'flow', operator: 'contains', value: 'x', result: 'Warning' },
      '/rules/0/operator',
    ],
    [
      'an operator that does not fit a boolean',
      { state: 'open', operator: '>', value: 1, result: 'Warning' },
      '/rules/0/operator',
    ],
    [
      'a value that does not fit the operator',
      { state: 'flow', operator: '<', value: 'low', result: 'Warning' },
      '/rules/0/value',
    ],
    [
      'a numeric operator on _parsed',
      { state: '_parsed', operator: '>=', value: 1, result: 'Warning' },
      '/rules/0/operator',
    ],
    [
      'an unknown operator',
      { state: 'flow', operator: '~', value: 1, result: 'Warning' },
      '/rules/0/operator',
    ],
  ])('answers 422 INVALID_HEALTH_CONFIG for %s, naming the rule', async (_name, rule, path) => {
    const error = expectStatus<ErrorBody>(await withRules([rule]), 422).error;
    expect(error.code).toBe('INVALID_HEALTH_CONFIG');
    expect(error.details).toEqual([expect.objectContaining({ index: 0, path })]);
    expect(error.message).toMatch(/rule 0: /);
  });

  it('names every bad rule by index', async () => {
    const error = expectStatus<ErrorBody>(
      await withRules([
        { state: 'flow', operator: 'between', value: [1, 5], result: 'Warning' },
        { state: 'open', operator: 'isTrue', result: 'Critical' },
        { state: 'flow', operator: 'between', value: [5, 1], result: 'Warning' },
        { state: 'nope', operator: 'exists', result: 'Warning' },
      ]),
      422,
    ).error;
    expect(error.details.map((d) => d.index)).toEqual([2, 3]);
  });

  it('accepts configs with _raw, whatever the operator, and _parsed with object operators', async () => {
    const driver = expectStatus<DriverBody>(
      await withRules([
        { state: '_raw', operator: 'contains', value: 'ERR', result: 'Critical' },
        { state: '_raw', operator: '>', value: 3, result: 'Warning' },
        { state: '_raw', operator: 'missing', result: 'Unknown' },
        { state: '_parsed', operator: 'hasKey', value: 'flow', result: 'Ok' },
        { state: '_parsed', operator: 'exists', result: 'Ok' },
        { state: 'open', operator: 'isFalse', result: 'Warning' },
      ]),
      201,
    );
    expect(driver.healthConfig.rules).toHaveLength(6);
  });

  it('refuses removing a target variable a rule still uses', async () => {
    const driver = expectStatus<DriverBody>(
      await withRules([{ state: 'temperature', operator: '<', value: -10, result: 'Warning' }]),
      201,
    );
    const response = await call('PUT', `/xapi/v1/device-drivers/${driver.id}`, {
      targetVariables: [VARIABLES[0]],
    });
    expect(expectStatus<ErrorBody>(response, 422).error.code).toBe('INVALID_HEALTH_CONFIG');
  });
});

describe('shared drivers', () => {
  let shared: DriverBody;
  let own: DriverBody;
  let hallAdmin: ReturnType<typeof caller>;

  beforeAll(async () => {
    shared = await createDriver({ title: 'Plant shared', shared: true, accountId: plant });
    own = await createDriver({ title: 'Plant private', accountId: plant });
    const user = await userWithPermissions(t, admin, 'Hall admin', ['deviceDriver.manage'], {
      accountId: hall,
    });
    hallAdmin = caller(t, bearer(user.token));
  });

  it('offers shared drivers of parent accounts read-only below', async () => {
    const mine = await createDriver({ title: 'Hall own' }, hallAdmin);
    expect(mine.accountId).toBe(hall);
    const listed = expectStatus<ListBody<DriverBody>>(
      await hallAdmin('GET', '/xapi/v1/device-drivers?pageSize=100'),
      200,
    );
    expect(listed.data.map((d) => d.id).sort()).toEqual([shared.id, mine.id].sort());
    expectStatus(await hallAdmin('GET', `/xapi/v1/device-drivers/${shared.id}`), 200);
    const test = await hallAdmin('POST', `/xapi/v1/device-drivers/${shared.id}/test`, {
      payload: { json: { a: 1 } },
    });
    expect(expectStatus<TestReply>(test, 200).values).toEqual([{ a: 1 }]);

    for (const response of [
      await hallAdmin('PUT', `/xapi/v1/device-drivers/${shared.id}`, { title: 'taken over' }),
      await hallAdmin('DELETE', `/xapi/v1/device-drivers/${shared.id}`),
    ]) {
      expect(response.statusCode).toBe(403);
      expect(errorCode(response)).toBe('INHERITED_DEVICE_DRIVER');
    }
    expect(errorCode(await hallAdmin('GET', `/xapi/v1/device-drivers/${own.id}`))).toBe('NOT_FOUND');
  });

  it('shows a parent’s shared drivers when the parent acts in the sub-account, and nothing to siblings', async () => {
    const asHall = expectStatus<ListBody<DriverBody>>(
      await call('GET', `/xapi/v1/device-drivers?accountId=${hall}&pageSize=100`),
      200,
    );
    expect(asHall.data.map((d) => d.id)).toContain(shared.id);
    expect(asHall.data.map((d) => d.id)).not.toContain(own.id);
    const otherUser = await userWithPermissions(t, admin, 'Other admin', ['deviceDriver.manage'], {
      accountId: other,
    });
    const asOther = caller(t, bearer(otherUser.token));
    expect(errorCode(await asOther('GET', `/xapi/v1/device-drivers/${shared.id}`))).toBe('NOT_FOUND');
    const listed = expectStatus<ListBody<DriverBody>>(await asOther('GET', '/xapi/v1/device-drivers'), 200);
    expect(listed.data.map((d) => d.id)).not.toContain(shared.id);
  });

  it('blocks deleting a driver in use and unsharing a driver sub-accounts use', async () => {
    await t.withContext(async () => {
      const em = t.ctx.em();
      const template = new DeviceTemplate();
      template.account = em.getReference(Account, hall);
      template.title = 'Uses the shared driver';
      template.driver = em.getReference(DeviceDriver, shared.id);
      await em.persistAndFlush(template);
    });
    const blocked = await call('DELETE', `/xapi/v1/device-drivers/${shared.id}`);
    expect(blocked.statusCode).toBe(409);
    expect(expectStatus<ErrorBody>(blocked, 409).error).toMatchObject({
      code: 'DELETE_BLOCKED',
      details: [{ type: 'deviceTemplate', accountId: hall }],
    });
    const unshare = await call('PUT', `/xapi/v1/device-drivers/${shared.id}`, { shared: false });
    expect(expectStatus<ErrorBody>(unshare, 409).error.code).toBe('DRIVER_IN_USE');
  });
});

describe('parser test endpoint', () => {
  const test = (body: Record<string, unknown>) => call('POST', '/xapi/v1/device-drivers/test', body);

  it('parses JSON, CBOR (base64) and binary (hex) samples', async () => {
    expect(
      expectStatus<TestReply>(
        await test({ parser: { type: 'json' }, payload: { json: [{ a: 1 }, { a: 2 }] } }),
        200,
      ),
    ).toEqual({
      values: [{ a: 1 }, { a: 2 }],
      warnings: [],
      states: [{ a: 1 }, { a: 2 }],
      codecWarnings: [],
      errors: [],
      logs: [],
    });
    const cbor = Buffer.from(encode({ flow: 12.5, open: true })).toString('base64');
    expect(
      expectStatus<TestReply>(await test({ parser: { type: 'cbor' }, payload: { base64: cbor } }), 200)
        .values,
    ).toEqual([{ flow: 12.5, open: true }]);
    const binary = await test({
      parser: BINARY,
      targetVariables: VARIABLES,
      payload: { hex: '01 02 2e fb 01' },
    });
    expect(expectStatus<TestReply>(binary, 200)).toMatchObject({
      values: [{ flow: 25.8, temperature: -12.34, open: true }],
      warnings: [],
    });
  });

  it('warns when values do not fit the target variables', async () => {
    const reply = expectStatus<TestReply>(
      await test({
        parser: { type: 'json' },
        targetVariables: VARIABLES,
        payload: { json: { flow: 'high' } },
      }),
      200,
    );
    expect(reply.warnings).toEqual(['"flow" is a string; the target variable expects number']);
  });

  it('answers 422 with the parse error code and message', async () => {
    const cases: Array<[Record<string, unknown>, string, RegExp]> = [
      [
        { parser: { type: 'json' }, payload: { base64: Buffer.from('{oops').toString('base64') } },
        'PARSE_ERROR',
        /not valid JSON/,
      ],
      [
        { parser: { type: 'json' }, payload: { json: Array.from({ length: 51 }, () => ({})) } },
        'PARSE_ERROR',
        /at most 50/,
      ],
      [{ parser: BINARY, payload: { hex: '0102' } }, 'PARSE_ERROR', /Field "temperature" needs bytes 2\.\.3/],
      [{ parser: { type: 'cbor' }, payload: { hex: 'a1' } }, 'PARSE_ERROR', /not valid CBOR/],
      [
        {
          parser: { type: 'javascript', code: 'function parse(b) { throw new Error("bad crc " + b[0]); }' },
          payload: { hex: '07' },
        },
        'PARSER_ERROR',
        /Error: bad crc 7/,
      ],
      [
        {
          parser: { type: 'javascript', code: 'function parse() { return { f: function () {} }; }' },
          payload: { hex: '' },
        },
        'PARSER_ERROR',
        /a function at "f"/,
      ],
      [
        {
          parser: { type: 'javascript', code: 'function parse() { var o = {}; o.o = o; return o; }' },
          payload: { hex: '' },
        },
        'PARSER_ERROR',
        /cyclic/,
      ],
    ];
    for (const [body, code, message] of cases) {
      const error = expectStatus<ErrorBody>(await test(body), 422).error;
      expect(error.code, JSON.stringify(body)).toBe(code);
      expect(error.message).toMatch(message);
    }
    expect(errorCode(await test({ parser: { type: 'binary', fields: [] }, payload: { hex: '' } }))).toBe(
      'INVALID_PARSER_CONFIG',
    );
    expect(errorCode(await test({ parser: { type: 'json' }, payload: { hex: '012' } }))).toBe(
      'VALIDATION_ERROR',
    );
  });

  it('stops endless loops and memory bombs, keeps the host out of reach, and keeps serving', async () => {
    const sandbox = (code: string, limits: Record<string, number> = {}) =>
      test({ parser: { type: 'javascript', code, ...limits }, payload: { hex: '01' } });
    const healthy = async () => {
      expectStatus(await t.app.inject({ url: '/health' }), 200);
      const ok = await sandbox(
        'function parse(bytes, meta) { return { first: bytes[0], meta: typeof meta }; }',
      );
      expect(expectStatus<TestReply>(ok, 200).values).toEqual([{ first: 1, meta: 'object' }]);
    };

    const started = Date.now();
    const loop = expectStatus<ErrorBody>(await sandbox('function parse() { while (true) {} }'), 422).error;
    expect(loop.code).toBe('PARSER_TIMEOUT');
    expect(Date.now() - started).toBeLessThan(2000);
    await healthy();

    const bomb = await sandbox(
      'function parse() { var k = []; for (;;) k.push({ n: k.length, s: "x" + k.length }); }',
      {
        memoryLimitMb: 4,
        timeoutMs: 1000,
      },
    );
    expect(expectStatus<ErrorBody>(bomb, 422).error.code).toBe('PARSER_MEMORY_LIMIT');
    await healthy();

    const host = await sandbox(
      'function parse() { return { process: typeof process, require: typeof require, global: typeof globalThis.process }; }',
    );
    expect(expectStatus<TestReply>(host, 200).values).toEqual([
      { process: 'undefined', require: 'undefined', global: 'undefined' },
    ]);
    await healthy();
  });

  it('tests a stored driver, and recompiles it after a change', async () => {
    const driver = await createDriver({
      title: 'Scripted',
      parser: { type: 'javascript', code: 'function parse(bytes) { return { flow: bytes[0] }; }' },
      targetVariables: VARIABLES,
    });
    const run = async () =>
      expectStatus<TestReply>(
        await call('POST', `/xapi/v1/device-drivers/${driver.id}/test`, { payload: { hex: '2a' } }),
        200,
      );
    expect(await run()).toMatchObject({ values: [{ flow: 42 }], warnings: [] });
    expectStatus(
      await call('PUT', `/xapi/v1/device-drivers/${driver.id}`, {
        parser: { type: 'javascript', code: 'function parse(bytes) { return { flow: String(bytes[0]) }; }' },
      }),
      200,
    );
    expect(await run()).toMatchObject({
      values: [{ flow: '42' }],
      warnings: ['"flow" is a string; the target variable expects number'],
    });
  });
});
