import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectClient,
  createBrokerConnector,
  startBrokerApp,
  upTopic,
  type BrokerCredentials,
  type BrokerTestApp,
} from './support/broker.js';
import { bearer, caller, expectStatus, login } from './support/identity.js';
import { insertDevice, insertDriver } from './support/ingest-fixtures.js';
import { startHttpReceiver, type HttpReceiver } from './support/http-receiver.js';
import { waitFor } from './support/wait.js';

/**
 * Integration flows end to end with real parts: an MQTT packet through the embedded broker →
 * packet store → pipeline → flow (filter → transformer) → webhook-out → an HTTP receiver that
 * verifies the Standard Webhooks signature; an alarm log entry (the real alarm log) → flow;
 * runs recorded; deactivation; blocked deletions; permissions.
 */

let t: BrokerTestApp;
let token: string;
let receiver: HttpReceiver;
let gateway: BrokerCredentials;
let deviceId: string;
let webhookId: string;
const secret = `whsec_${randomBytes(32).toString('base64')}`;
const call = (...args: Parameters<ReturnType<typeof caller>>) => caller(t, bearer(token))(...args);

interface Flow {
  id: string;
  active: boolean;
  updatedAt: string;
}
interface Run {
  outcome: string;
  input: Record<string, unknown>;
  output: unknown;
  error: { code: string; level: string } | null;
  deliveries: Array<{ connectorId: string; queued: boolean }>;
}

beforeAll(async () => {
  t = await startBrokerApp();
  token = await login(t);
  receiver = await startHttpReceiver();
  gateway = await createBrokerConnector(t);
  const driverId = await insertDriver(t, { type: 'json' });
  deviceId = await insertDevice(t, { connectorId: gateway.connectorId, deviceKey: 'boiler-1', driverId });
  webhookId = expectStatus<{ id: string }>(
    await call('POST', '/xapi/v1/connectors', {
      type: 'webhook-out',
      title: 'ops hook',
      config: { url: `${receiver.url}/in`, signingSecret: secret },
    }),
    201,
  ).id;
}, 60_000);
afterAll(async () => {
  await t?.services.flowRunner.stop();
  await t?.services.outgoingDispatcher.stop();
  await receiver?.close();
  await t?.closeAll();
});

const create = async <T = { id: string }>(path: string, body: Record<string, unknown>) =>
  expectStatus<T>(await call('POST', path, body), 201);

async function runsOf(flowId: string, count: number): Promise<Run[]> {
  return waitFor(
    async () => {
      await t.services.flowRunner.flushRuns();
      const runs = expectStatus<{ data: Run[] }>(
        await call('GET', `/xapi/v1/integration-flows/${flowId}/runs`),
        200,
      ).data;
      return runs.length >= count ? runs : undefined;
    },
    15_000,
    { what: `${count} runs of flow ${flowId}` },
  );
}

describe('filters and transformers', () => {
  it('default to Generic input and a template script, test with a sample input, and refuse code that does not load', async () => {
    const filter = await create<{ id: string; inputType: string; code: string }>('/xapi/v1/filters', {
      title: 'Anything',
    });
    expect(filter.inputType).toBe('Generic');
    expect(filter.code).toContain('function filter(input, meta)');
    expect(
      expectStatus(await call('POST', `/xapi/v1/filters/${filter.id}/test`, { input: 42 }), 200),
    ).toMatchObject({ output: true });

    const transformer = await create<{ id: string; description: string }>('/xapi/v1/transformers', {
      title: 'Celsius to Fahrenheit',
      description: 'Adds °F',
      code: 'function transform(input) { return { f: input.c * 9 / 5 + 32 }; }',
    });
    expect(transformer.description).toBe('Adds °F');
    expect(
      expectStatus(
        await call('POST', `/xapi/v1/transformers/${transformer.id}/test`, { input: { c: 100 } }),
        200,
      ),
    ).toMatchObject({ output: { f: 212 } });
    const failing = await call('POST', `/xapi/v1/transformers/${transformer.id}/test`, { input: null });
    expect(failing.statusCode).toBe(422);
    expect(failing.json()).toMatchObject({
      error: {
        code: 'SCRIPT_ERROR',
        message: expect.stringContaining('transformer script failed') as string,
      },
    });

    const slow = await create('/xapi/v1/transformers', {
      title: 'Loop',
      code: 'function transform() { for (;;) {} }',
    });
    expect((await call('POST', `/xapi/v1/transformers/${slow.id}/test`, { input: 1 })).json()).toMatchObject({
      error: { code: 'SCRIPT_TIMEOUT' },
    });

    for (const [path, code] of [
      ['/xapi/v1/filters', 'function nope() {}'],
      ['/xapi/v1/filters', 'function filter( {'],
      ['/xapi/v1/transformers', 'function filter() { return 1; }'],
    ] as const) {
      const response = await call('POST', path, { title: 'bad', code });
      expect(response.statusCode, code).toBe(400);
      expect(response.json()).toMatchObject({
        error: { code: 'VALIDATION_ERROR', details: [{ path: '/code' }] },
      });
    }
  });

  it('answers DS_FILTER_INVALID_INPUT when a sample does not fit the input type, and FILTER_RESULT_INVALID for non-booleans', async () => {
    const packetFilter = await create('/xapi/v1/filters', { title: 'Packets only', inputType: 'Packet' });
    const invalid = await call('POST', `/xapi/v1/filters/${packetFilter.id}/test`, { input: { hello: 1 } });
    expect(invalid.statusCode).toBe(422);
    expect(invalid.json()).toMatchObject({ error: { code: 'DS_FILTER_INVALID_INPUT' } });
    const numeric = await create('/xapi/v1/filters', {
      title: 'Returns a number',
      code: 'function filter() { return 1; }',
    });
    expect((await call('POST', `/xapi/v1/filters/${numeric.id}/test`, { input: 1 })).json()).toMatchObject({
      error: { code: 'FILTER_RESULT_INVALID' },
    });
  });

  it('lists sorted by updatedAt, both directions', async () => {
    const a = await create('/xapi/v1/transformers', { title: 'zz first' });
    const b = await create('/xapi/v1/transformers', { title: 'aa second' });
    await new Promise((r) => setTimeout(r, 5));
    expectStatus(await call('PUT', `/xapi/v1/transformers/${a.id}`, { description: 'touched' }), 200);
    const desc = expectStatus<{ data: Array<{ id: string }> }>(
      await call('GET', '/xapi/v1/transformers?sort=-updatedAt'),
      200,
    ).data.map((x) => x.id);
    expect(desc[0]).toBe(a.id);
    expect(desc.indexOf(b.id)).toBeGreaterThan(0);
    const asc = expectStatus<{ data: Array<{ id: string }> }>(
      await call('GET', '/xapi/v1/transformers?sort=updatedAt'),
      200,
    ).data.map((x) => x.id);
    expect(asc.at(-1)).toBe(a.id);
    for (const path of ['/xapi/v1/filters', '/xapi/v1/integration-flows']) {
      expectStatus(await call('GET', `${path}?sort=-updatedAt`), 200);
      expect((await call('GET', `${path}?sort=code`)).statusCode).toBe(400);
    }
  });
});

describe('a flow end to end', () => {
  let flowId: string;
  let filterId: string;
  let transformerId: string;

  it('takes a packet published over MQTT through filter and transformer to a signed webhook', async () => {
    filterId = (
      await create('/xapi/v1/filters', {
        title: 'Hot',
        inputType: 'Packet',
        code: 'function filter(input) { return input.states.temperature > 20; }',
      })
    ).id;
    transformerId = (
      await create('/xapi/v1/transformers', {
        title: 'Alert body',
        code: 'function transform(input, meta) { return { device: input.deviceId, celsius: input.states.temperature, flow: meta.flowTitle }; }',
      })
    ).id;
    const flow = await create<Flow>('/xapi/v1/integration-flows', {
      title: 'Hot boilers',
      source: { type: 'packets', connectorIds: [gateway.connectorId] },
      steps: [
        { type: 'filter', id: filterId },
        { type: 'transformer', id: transformerId },
      ],
      targets: [{ connectorId: webhookId }],
    });
    flowId = flow.id;
    expect(flow.active).toBe(true);

    const client = await connectClient(`mqtt://127.0.0.1:${t.mqttPort}`, gateway);
    for (const temperature of [25, 10])
      await client.publishAsync(upTopic(gateway, 'boiler-1'), JSON.stringify({ temperature }), { qos: 1 });
    await client.endAsync();

    const [request] = await receiver.waitFor(1);
    const body = new Webhook(secret).verify(request!.body, request!.headers as Record<string, string>);
    expect(body).toEqual({ device: deviceId, celsius: 25, flow: 'Hot boilers' });
    const runs = await runsOf(flowId, 2);
    expect(runs.map((r) => r.outcome)).toEqual(['filtered', 'sent']);
    expect(runs[1]).toMatchObject({
      input: { deviceId, connectorId: gateway.connectorId, states: { temperature: 25 } },
      output: body,
      error: null,
    });
    expect(runs[1]!.deliveries).toEqual([{ connectorId: webhookId, queued: true }]);
    expect(runs[0]).toMatchObject({ input: { states: { temperature: 10 } }, output: null, error: null });
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.received).toHaveLength(1);
  });

  it('records a mismatched filter input as DS_FILTER_INVALID_INPUT at warn level, not as a failure', async () => {
    const alarmOnly = await create('/xapi/v1/filters', {
      title: 'Alarm entries only',
      inputType: 'AlarmEntry',
    });
    const flow = await create<Flow>('/xapi/v1/integration-flows', {
      title: 'Mismatched',
      source: { type: 'packets', deviceIds: [deviceId] },
      steps: [{ type: 'filter', id: alarmOnly.id }],
      targets: [{ connectorId: webhookId }],
    });
    const client = await connectClient(`mqtt://127.0.0.1:${t.mqttPort}`, gateway);
    await client.publishAsync(upTopic(gateway, 'boiler-1'), JSON.stringify({ temperature: 30 }), { qos: 1 });
    await client.endAsync();
    const [run] = await runsOf(flow.id, 1);
    expect(run).toMatchObject({
      outcome: 'filtered',
      error: { code: 'DS_FILTER_INVALID_INPUT', level: 'warn' },
    });
    expectStatus(await call('DELETE', `/xapi/v1/integration-flows/${flow.id}`), 204);
  });

  it('runs on alarm log entries of the chosen categories (the real alarm log)', async () => {
    receiver.received.length = 0;
    const toText = await create('/xapi/v1/transformers', {
      title: 'Alarm text',
      code: 'function transform(a) { return { text: a.category + ": " + a.message, ref: a.reference }; }',
    });
    const flow = await create<Flow>('/xapi/v1/integration-flows', {
      title: 'Connector alarms',
      source: { type: 'alarms', categories: ['Konnektorüberwachung'] },
      steps: [{ type: 'transformer', id: toText.id }],
      targets: [{ connectorId: webhookId }],
    });
    await t.services.alarmLogs.write({ accountId: t.rootAccountId, category: 'Other', message: 'ignored' });
    await t.services.alarmLogs.write({
      accountId: t.rootAccountId,
      category: 'Konnektorüberwachung',
      message: 'no data for 15 min',
      reference: { type: 'connector', id: gateway.connectorId },
    });
    const [request] = await receiver.waitFor(1);
    expect(JSON.parse(request!.body)).toEqual({
      text: 'Konnektorüberwachung: no data for 15 min',
      ref: { type: 'connector', id: gateway.connectorId },
    });
    const runs = await runsOf(flow.id, 1);
    expect(runs).toHaveLength(1);
    expect(runs[0]!.input).toMatchObject({ category: 'Konnektorüberwachung', status: 'open' });
  });

  it('does nothing while deactivated', async () => {
    receiver.received.length = 0;
    expect(
      expectStatus<Flow>(await call('POST', `/xapi/v1/integration-flows/${flowId}/deactivate`), 200).active,
    ).toBe(false);
    const before = (await runsOf(flowId, 2)).length;
    const client = await connectClient(`mqtt://127.0.0.1:${t.mqttPort}`, gateway);
    await client.publishAsync(upTopic(gateway, 'boiler-1'), JSON.stringify({ temperature: 50 }), { qos: 1 });
    await client.endAsync();
    await new Promise((r) => setTimeout(r, 1500));
    await t.services.flowRunner.flushRuns();
    expect(receiver.received.map((r) => r.body)).toEqual([]);
    expect((await runsOf(flowId, 0)).length).toBe(before);
    expectStatus(await call('POST', `/xapi/v1/integration-flows/${flowId}/activate`), 200);
  });

  it('blocks deleting a connector, filter or transformer the flow uses (409 DELETE_BLOCKED naming the flow)', async () => {
    // A packet source counts too: a connector without devices, named as the flow's source.
    const source = await create('/xapi/v1/connectors', { type: 'webhook-in', title: 'source only' });
    expectStatus(
      await call('PUT', `/xapi/v1/integration-flows/${flowId}`, {
        source: { type: 'packets', connectorIds: [gateway.connectorId, source.id] },
      }),
      200,
    );
    for (const path of [
      `/xapi/v1/connectors/${webhookId}`,
      `/xapi/v1/connectors/${source.id}`,
      `/xapi/v1/filters/${filterId}`,
      `/xapi/v1/transformers/${transformerId}`,
    ]) {
      const response = await call('DELETE', path);
      expect(response.statusCode, path).toBe(409);
      expect(response.json()).toMatchObject({
        error: {
          code: 'DELETE_BLOCKED',
          details: expect.arrayContaining([
            { type: 'integrationFlow', id: flowId, title: 'Hot boilers' },
          ]) as unknown[],
        },
      });
    }
    expectStatus(await call('PUT', `/xapi/v1/integration-flows/${flowId}`, { steps: [] }), 200);
    expectStatus(await call('DELETE', `/xapi/v1/filters/${filterId}`), 204);
    expectStatus(await call('DELETE', `/xapi/v1/transformers/${transformerId}`), 204);
  });

  it('refuses references outside the flow account and non-outgoing targets', async () => {
    const bad = await call('POST', '/xapi/v1/integration-flows', {
      title: 'bad',
      source: { type: 'packets' },
      targets: [{ connectorId: gateway.connectorId }],
      steps: [{ type: 'filter', id: '0190c0de-0000-7000-8000-000000000000' }],
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ error: { code: 'VALIDATION_ERROR' } });
  });
});

describe('permissions', () => {
  it('lets Integration.manage use flows, filters and transformers; refuses a user without it', async () => {
    const role = (perms: string[]) =>
      create<{ id: string }>('/xapi/v1/roles', {
        name: `r-${randomBytes(3).toString('hex')}`,
        permissions: perms,
      });
    const integration = await role(['Integration.manage']);
    const dashboards = await role(['dashboard.read']);
    const user = async (roleId: string) => {
      const email = `u-${randomBytes(4).toString('hex')}@stellwerk.test`;
      await t.withContext(() =>
        t.services.users.create({
          accountId: t.rootAccountId,
          email,
          password: 'long enough password 1',
          roleIds: [roleId],
        }),
      );
      return login(t, email, 'long enough password 1');
    };
    const integrator = caller(t, bearer(await user(integration.id)));
    const viewer = caller(t, bearer(await user(dashboards.id)));
    const filter = expectStatus<{ id: string }>(
      await integrator('POST', '/xapi/v1/filters', { title: 'by integrator' }),
      201,
    );
    expectStatus(await integrator('POST', '/xapi/v1/transformers', { title: 'by integrator' }), 201);
    expectStatus(
      await integrator('POST', '/xapi/v1/integration-flows', {
        title: 'by integrator',
        source: { type: 'alarms' },
        steps: [{ type: 'filter', id: filter.id }],
      }),
      201,
    );
    for (const path of ['/xapi/v1/integration-flows', '/xapi/v1/filters', '/xapi/v1/transformers']) {
      const response = await viewer('GET', path);
      expect(response.statusCode, path).toBe(403);
      expect(response.json<{ error: { code: string } }>().error.code).toMatch(/^NO_PERMISSION_/);
    }
  });
});
