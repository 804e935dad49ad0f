import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, caller, expectStatus, login } from './support/identity.js';
import { connectorLogs } from './support/outgoing.js';
import { startSmtpServer, type TestSmtpServer } from './support/smtp.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { waitFor } from './support/wait.js';

/**
 * smtp-mail against real SMTP servers started here: password login, and OAuth 2.0 (XOAUTH2)
 * after a consent whose callback stores the refresh token sealed; the token endpoint is a small
 * HTTP server standing in for the hosted mail service.
 */

let t: TestApp;
let token: string;
let smtp: TestSmtpServer;
const call = (...args: Parameters<ReturnType<typeof caller>>) => caller(t, bearer(token))(...args);

beforeAll(async () => {
  t = await createTestApp();
  token = await login(t);
  smtp = await startSmtpServer();
});
afterAll(async () => {
  await t?.services.outgoingDispatcher.stop();
  await smtp?.close();
  await t?.close();
});

const send = (connectorId: string, message: { body: unknown; subject?: string; to?: string[] }) =>
  t.services.outgoingDispatcher.send(t.rootAccountId, connectorId, message, {
    kind: 'connector-monitoring',
    id: 'm-1',
  });

describe('smtp-mail with a password', () => {
  it('delivers to the default recipients, or to the message recipients, with the subject', async () => {
    const url = new URL(smtp.url);
    const connector = expectStatus<{ id: string; config: Record<string, unknown>; capabilities: string[] }>(
      await call('POST', '/xapi/v1/connectors', {
        type: 'smtp-mail',
        title: 'Plant mail',
        config: {
          host: url.hostname,
          port: Number(url.port),
          security: 'none',
          from: 'Stellwerk <alarms@plant.test>',
          to: ['ops@plant.test'],
          auth: 'password',
          username: decodeURIComponent(url.username),
          password: decodeURIComponent(url.password),
        },
      }),
      201,
    );
    expect(connector.capabilities).toEqual(['sends']);
    expect(connector.config.password).toBe('********');
    await send(connector.id, { subject: 'Boiler too hot', body: 'Boiler 1 reads 95 degrees' });
    const mail = await smtp.waitFor('ops@plant.test');
    expect(mail.from).toBe('alarms@plant.test');
    expect(mail.raw).toContain('Subject: Boiler too hot');
    expect(mail.decoded).toContain('Boiler 1 reads 95 degrees');
    await send(connector.id, { body: { level: 'high' }, to: ['night-shift@plant.test'] });
    const second = await smtp.waitFor('night-shift@plant.test');
    expect(second.decoded).toContain('"level": "high"');
  });

  it('logs a refused login as a final failure', async () => {
    const url = new URL(smtp.url);
    const connector = expectStatus<{ id: string }>(
      await call('POST', '/xapi/v1/connectors', {
        type: 'smtp-mail',
        title: 'Wrong password',
        config: {
          host: url.hostname,
          port: Number(url.port),
          security: 'none',
          from: 'a@plant.test',
          to: ['x@plant.test'],
          username: 'stellwerk',
          password: 'wrong',
        },
      }),
      201,
    );
    await send(connector.id, { body: 'x' });
    const logs = await waitFor(async () => {
      const entries = await connectorLogs(t, token, connector.id);
      return entries.length ? entries : undefined;
    });
    expect(logs[0]).toMatchObject({ level: 'error', details: { code: 'SMTP_EAUTH' } });
    expect(logs[0]!.message).toContain('after 1 attempt(s)');
  });
});

describe('smtp-mail with OAuth 2.0', () => {
  let tokenServer: http.Server;
  let tokenUrl: string;
  let oauthSmtp: SMTPServer;
  let oauthPort: number;
  const received: string[] = [];
  const tokenRequests: URLSearchParams[] = [];

  beforeAll(async () => {
    tokenServer = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const form = new URLSearchParams(body);
        tokenRequests.push(form);
        res.setHeader('content-type', 'application/json');
        const ok = form.get('client_id') === 'cid' && form.get('client_secret') === 'csecret';
        if (ok && form.get('grant_type') === 'authorization_code' && form.get('code') === 'the-code') {
          res.end(
            JSON.stringify({
              access_token: 'at-1',
              refresh_token: 'rt-secret-1',
              expires_in: 3600,
              token_type: 'Bearer',
            }),
          );
        } else if (
          ok &&
          form.get('grant_type') === 'refresh_token' &&
          form.get('refresh_token') === 'rt-secret-1'
        ) {
          res.end(JSON.stringify({ access_token: 'at-2', expires_in: 3600, token_type: 'Bearer' }));
        } else {
          res.statusCode = 400;
          res.end(JSON.stringify({ error: 'invalid_grant' }));
        }
      });
    });
    await new Promise<void>((resolve) => tokenServer.listen(0, '127.0.0.1', resolve));
    tokenUrl = `http://127.0.0.1:${(tokenServer.address() as AddressInfo).port}/token`;
    oauthSmtp = new SMTPServer({
      authMethods: ['XOAUTH2'],
      disabledCommands: ['STARTTLS'],
      allowInsecureAuth: true,
      logger: false,
      onAuth(auth, _session, callback) {
        if (
          auth.method === 'XOAUTH2' &&
          auth.username === 'mailbox@plant.test' &&
          auth.accessToken === 'at-2'
        )
          callback(null, { user: auth.username });
        else callback(null, { data: { status: '401', schemes: 'bearer' } });
      },
      onData(stream, _session, callback) {
        let raw = '';
        stream.on('data', (c: Buffer) => (raw += c.toString()));
        stream.on('end', () => (received.push(raw), callback()));
      },
    });
    await new Promise<void>((resolve) => oauthSmtp.listen(0, '127.0.0.1', resolve));
    oauthPort = (oauthSmtp.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => tokenServer?.close(resolve));
    await new Promise<void>((resolve) => oauthSmtp?.close(() => resolve()));
  });

  it('runs the consent, stores the refresh token sealed, and sends through XOAUTH2', async () => {
    const connector = expectStatus<{ id: string }>(
      await call('POST', '/xapi/v1/connectors', {
        type: 'smtp-mail',
        title: 'Hosted mail',
        config: {
          host: '127.0.0.1',
          port: oauthPort,
          security: 'none',
          from: 'mailbox@plant.test',
          to: ['boss@plant.test'],
          auth: 'oauth2',
          username: 'mailbox@plant.test',
          oauth2Provider: 'custom',
          oauth2ClientId: 'cid',
          oauth2ClientSecret: 'csecret',
          oauth2AuthUrl: 'https://login.mail.example/authorize',
          oauth2TokenUrl: tokenUrl,
        },
      }),
      201,
    );
    // Not authorised yet: a final failure, logged.
    await send(connector.id, { body: 'too early' });
    await waitFor(async () =>
      (await connectorLogs(t, token, connector.id)).some((e) => e.details.code === 'OAUTH2_NOT_AUTHORISED')
        ? true
        : undefined,
    );

    const { authorizationUrl, redirectUri } = expectStatus<{ authorizationUrl: string; redirectUri: string }>(
      await call('POST', '/xapi/v1/oauth2/mail/authorize', { connectorId: connector.id }),
      200,
    );
    expect(redirectUri).toMatch(/\/api\/v1\/oauth2\/custom\/callback$/);
    const consent = new URL(authorizationUrl);
    expect(consent.origin + consent.pathname).toBe('https://login.mail.example/authorize');
    expect(Object.fromEntries(consent.searchParams)).toMatchObject({
      client_id: 'cid',
      response_type: 'code',
      redirect_uri: redirectUri,
    });
    const state = consent.searchParams.get('state')!;

    const forged = await t.app.inject({
      url: `/api/v1/oauth2/custom/callback?code=the-code&state=${encodeURIComponent(`${state.slice(0, -4)}AAAA`)}`,
    });
    expect(forged.statusCode).toBe(401);
    expect(forged.json()).toMatchObject({ error: { code: 'OAUTH_STATE_INVALID' } });
    const otherProvider = await t.app.inject({
      url: `/api/v1/oauth2/google/callback?code=the-code&state=${encodeURIComponent(state)}`,
    });
    expect(otherProvider.statusCode).toBe(401);

    const callback = await t.app.inject({
      url: `/api/v1/oauth2/custom/callback?code=the-code&state=${encodeURIComponent(state)}`,
    });
    expect(callback.statusCode, callback.body).toBe(200);
    expect(callback.headers['content-type']).toMatch(/^text\/html/);
    expect(tokenRequests[0]!.get('redirect_uri')).toBe(redirectUri);

    const [row] = await t.orm.em
      .fork()
      .getConnection()
      .execute<Array<{ config: Record<string, unknown> }>>('SELECT config FROM connectors WHERE id = ?', [
        connector.id,
      ]);
    expect(row!.config.oauth2RefreshToken).toEqual({ sealed: expect.any(String) as string });
    expect(JSON.stringify(row!.config)).not.toContain('rt-secret-1');
    expect(JSON.stringify(row!.config)).not.toContain('csecret');
    const read = expectStatus<{ config: Record<string, unknown> }>(
      await call('GET', `/xapi/v1/connectors/${connector.id}`),
      200,
    );
    expect(read.config.oauth2RefreshToken).toBe('********');

    await new Promise((r) => setTimeout(r, 2100)); // the dispatcher re-reads a connector at most every 2 s
    await send(connector.id, { subject: 'Granted', body: 'sent with XOAUTH2' });
    await waitFor(async () => (received.length > 0 ? true : undefined));
    expect(received[0]).toContain('Subject: Granted');
    expect(tokenRequests.some((f) => f.get('grant_type') === 'refresh_token')).toBe(true);
  });
});
