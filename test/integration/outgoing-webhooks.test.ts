import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, caller, expectStatus, login } from './support/identity.js';
import { startHttpReceiver, type HttpReceiver } from './support/http-receiver.js';
import { connectorLogs, metricValue } from './support/outgoing.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { waitFor } from './support/wait.js';

/**
 * Webhook (Outgoing) through the dispatcher, against a real HTTP receiver on loopback: Standard
 * Webhooks signatures checked with the `standardwebhooks` package, PATCH, retries with backoff,
 * and SSRF refusals on a server that allows no private targets.
 */

let t: TestApp;
let token: string;
let receiver: HttpReceiver;
const secret = `whsec_${randomBytes(32).toString('base64')}`;

beforeAll(async () => {
  t = await createTestApp();
  token = await login(t);
  receiver = await startHttpReceiver();
});
afterAll(async () => {
  await t?.services.outgoingDispatcher.stop();
  await receiver?.close();
  await t?.close();
});

async function webhook(config: Record<string, unknown>, app = t, auth = token) {
  return expectStatus<{ id: string; config: Record<string, unknown>; capabilities: string[] }>(
    await caller(app, bearer(auth))('POST', '/xapi/v1/connectors', {
      type: 'webhook-out',
      title: 'out',
      config,
    }),
    201,
  );
}

const send = (connectorId: string, body: unknown, app = t) =>
  app.services.outgoingDispatcher.send(
    app.rootAccountId,
    connectorId,
    { body },
    { kind: 'rule', id: 'test-rule' },
  );

describe('webhook-out', () => {
  it('signs with Standard Webhooks: the receiver verifies with the standardwebhooks package', async () => {
    const connector = await webhook({
      url: `${receiver.url}/hook`,
      signingSecret: secret,
      headers: { 'x-tenant': 'north' },
    });
    expect(connector.capabilities).toEqual(['sends']);
    expect(connector.config.signingSecret).toBe('********');
    const row = await t.orm.em
      .fork()
      .getConnection()
      .execute<Array<{ config: unknown }>>('SELECT config FROM connectors WHERE id = ?', [connector.id]);
    expect(JSON.stringify(row[0]!.config)).not.toContain(secret.slice(6, 20));

    expect(await send(connector.id, { temperature: 21.5, device: 'boiler-1' })).toEqual({ queued: true });
    const [request] = await receiver.waitFor(1);
    expect(request!.method).toBe('POST');
    expect(request!.url).toBe('/hook');
    expect(request!.headers['x-tenant']).toBe('north');
    expect(request!.headers['content-type']).toBe('application/json');
    const headers = {
      'webhook-id': String(request!.headers['webhook-id']),
      'webhook-timestamp': String(request!.headers['webhook-timestamp']),
      'webhook-signature': String(request!.headers['webhook-signature']),
    };
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(secret).verify(request!.body, headers)).toEqual({
      temperature: 21.5,
      device: 'boiler-1',
    });
    // A tampered body or another secret does not verify.
    expect(() => new Webhook(secret).verify(request!.body.replace('21.5', '99'), headers)).toThrow();
    expect(() =>
      new Webhook(`whsec_${randomBytes(32).toString('base64')}`).verify(request!.body, headers),
    ).toThrow();
    await waitFor(async () =>
      (await metricValue(t, 'stellwerk_outgoing_messages_total', {
        connector: connector.id,
        result: 'sent',
      })) === 1
        ? true
        : undefined,
    );
  });

  it('sends with PATCH when configured, unsigned without a secret', async () => {
    receiver.received.length = 0;
    const connector = await webhook({ url: `${receiver.url}/items/7`, method: 'PATCH' });
    await send(connector.id, 'plain text');
    const [request] = await receiver.waitFor(1);
    expect(request!.method).toBe('PATCH');
    expect(request!.body).toBe('plain text');
    expect(request!.headers['content-type']).toMatch(/^text\/plain/);
    expect(request!.headers['webhook-signature']).toBeUndefined();
  });

  it('retries 503 and 429 with backoff, then delivers once with the same webhook-id', async () => {
    receiver.received.length = 0;
    receiver.answers.push(503, 429);
    const connector = await webhook({
      url: receiver.url,
      signingSecret: secret,
      retryDelayMs: 50,
      maxAttempts: 5,
    });
    await send(connector.id, { n: 1 });
    const requests = await receiver.waitFor(3);
    expect(requests).toHaveLength(3);
    expect(new Set(requests.map((r) => r.headers['webhook-id'])).size).toBe(1);
    for (const r of requests)
      expect(() => new Webhook(secret).verify(r.body, r.headers as Record<string, string>)).not.toThrow();
    await waitFor(async () =>
      (await metricValue(t, 'stellwerk_outgoing_messages_total', {
        connector: connector.id,
        result: 'sent',
      })) === 1
        ? true
        : undefined,
    );
    expect(await metricValue(t, 'stellwerk_outgoing_retries_total', { connector: connector.id })).toBe(2);
  });

  it('gives up after maxAttempts and on a final 4xx, with connector log entries and failed counts', async () => {
    receiver.received.length = 0;
    receiver.answers.push(500, 500, 404);
    const retrying = await webhook({ url: receiver.url, retryDelayMs: 20, maxAttempts: 2 });
    await send(retrying.id, { n: 1 });
    await receiver.waitFor(2);
    const final = await webhook({ url: receiver.url, retryDelayMs: 20, maxAttempts: 5 });
    await send(final.id, { n: 2 });
    await receiver.waitFor(3);
    for (const [id, code, attempts] of [
      [retrying.id, 'HTTP_500', 2],
      [final.id, 'HTTP_404', 1],
    ] as const) {
      const logs = await waitFor(async () => {
        const entries = await connectorLogs(t, token, id);
        return entries.some((e) => e.level === 'error') ? entries : undefined;
      });
      expect(logs[0]).toMatchObject({
        level: 'error',
        details: { code, origin: { kind: 'rule', id: 'test-rule' } },
      });
      expect(logs[0]!.message).toContain(`after ${attempts} attempt(s)`);
      expect(
        await metricValue(t, 'stellwerk_outgoing_messages_total', { connector: id, result: 'failed' }),
      ).toBe(1);
    }
    expect(receiver.received).toHaveLength(3);
  });

  it('refuses bad settings and answers 404 / 422 for connectors it cannot send through', async () => {
    const call = caller(t, bearer(token));
    for (const config of [
      { url: 'ftp://example.test/' },
      { url: 'https://user:pw@example.test/' },
      { url: 'https://example.test/', method: 'TRACE' },
      { url: 'https://example.test/', signingSecret: 'not-a-whsec' },
      { url: 'https://example.test/', headers: { 'webhook-signature': 'x' } },
      { url: 'https://example.test/', overflow: 'drop-all' },
    ]) {
      const response = await call('POST', '/xapi/v1/connectors', {
        type: 'webhook-out',
        title: 'bad',
        config,
      });
      expect(response.statusCode, JSON.stringify(config)).toBe(400);
      expect(response.json()).toMatchObject({ error: { code: 'VALIDATION_ERROR' } });
    }
    const incoming = expectStatus<{ id: string }>(
      await call('POST', '/xapi/v1/connectors', { type: 'webhook-in', title: 'in' }),
      201,
    );
    await expect(send(incoming.id, {})).rejects.toMatchObject({
      status: 422,
      code: 'NOT_OUTGOING_CONNECTOR',
    });
    await expect(send('0190c0de-0000-7000-8000-000000000000', {})).rejects.toMatchObject({ status: 404 });
    const other = await webhook({ url: receiver.url });
    await expect(
      t.services.outgoingDispatcher.send(
        '0190c0de-0000-7000-8000-000000000001',
        other.id,
        { body: {} },
        { kind: 'flow', id: 'x' },
      ),
    ).rejects.toMatchObject({ status: 404 });
    expectStatus(await call('POST', `/xapi/v1/connectors/${other.id}/deactivate`), 200);
    await new Promise((r) => setTimeout(r, 2100)); // the dispatcher reads connectors at most every 2 s
    expect(await send(other.id, {})).toEqual({ queued: false, reason: 'inactive' });
  });
});

describe('SSRF protection (no STELLWERK_OUTGOING_ALLOW_PRIVATE)', () => {
  let strict: TestApp;
  let strictToken: string;
  beforeAll(async () => {
    strict = await createTestApp({ env: { STELLWERK_OUTGOING_ALLOW_PRIVATE: '' } });
    strictToken = await login(strict);
  });
  afterAll(async () => {
    await strict?.services.outgoingDispatcher.stop();
    await strict?.close();
  });

  it('refuses loopback, private, link-local and IPv6 loopback targets; nothing reaches the receiver', async () => {
    receiver.received.length = 0;
    const targets = [
      `http://127.0.0.1:${receiver.port}/`,
      `http://localhost:${receiver.port}/`,
      'http://10.1.2.3/',
      'http://169.254.169.254/latest/meta-data/',
      'http://192.168.0.10/',
      `http://[::1]:${receiver.port}/`,
      'http://[::ffff:127.0.0.1]/',
      'http://[fd00::1]/',
    ];
    for (const url of targets) {
      const connector = await webhook({ url, retryDelayMs: 10 }, strict, strictToken);
      await send(connector.id, { probe: url }, strict);
      const logs = await waitFor(async () => {
        const entries = await connectorLogs(strict, strictToken, connector.id);
        return entries.length > 0 ? entries : undefined;
      });
      expect(logs[0], url).toMatchObject({ level: 'error', details: { code: 'OUTGOING_TARGET_REFUSED' } });
      expect(logs[0]!.message).toContain('STELLWERK_OUTGOING_ALLOW_PRIVATE');
      expect(logs[0]!.message).toContain('after 1 attempt(s)');
    }
    expect(receiver.received).toEqual([]);
  });
});
