import { X509Certificate } from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import type net from 'node:net';
import path from 'node:path';
import mqtt from 'mqtt';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../server/src/platform/crypto/ids.js';
import { createTestDatabase } from './support/database.js';
import {
  killSpawnedServers,
  startServer,
  tempDataDir,
  type ServerProcess,
} from './support/server-process.js';

/**
 * Two real server processes. One serves HTTPS with the certificate it made itself, redirects a plain
 * HTTP port, and trusts the reverse proxy on 127.0.0.1 (STELLWERK_TRUST_PROXY); the other trusts no
 * proxy. The proxy is a small Node HTTP proxy started here that, like nginx's
 * `$proxy_add_x_forwarded_for`, names the address its client connected from; the two "clients" are
 * the loopback addresses 127.0.0.2 and 127.0.0.3.
 */

const ADMIN = { email: 'tls-admin@stellwerk.test', password: 'tls admin password 12345' };
const MAX_FAILURES_PER_CLIENT = 3;
const cleanups: Array<() => Promise<unknown>> = [];
let tlsServer: ServerProcess;
let plainServer: ServerProcess;
let dataDir: string;
let certPem: string;
let redirectPort: number;

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/** One request with node:http(s), so the CA and the client's own address can be chosen. */
function call(
  url: string,
  options: {
    method?: string;
    body?: unknown;
    headers?: http.OutgoingHttpHeaders;
    localAddress?: string;
  } = {},
): Promise<Reply> {
  const target = new URL(url);
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  const requestOptions: https.RequestOptions = {
    method: options.method ?? 'GET',
    headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...options.headers },
    ...(options.localAddress ? { localAddress: options.localAddress } : {}),
    ...(target.protocol === 'https:' ? { ca: certPem } : {}),
    agent: false,
  };
  return new Promise((resolve, reject) => {
    const request = (target.protocol === 'https:' ? https : http).request(
      target,
      requestOptions,
      (response) => {
        let text = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, text }),
        );
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

/** An HTTP reverse proxy to `upstream` that sets X-Forwarded-For to the address its client came from. */
async function forwardingProxy(upstream: string): Promise<string> {
  const base = new URL(upstream);
  const proxy = http.createServer((request, response) => {
    const client = request.socket.remoteAddress!.replace(/^::ffff:/, '');
    const forwarded = (base.protocol === 'https:' ? https : http).request(
      {
        host: base.hostname,
        port: base.port,
        method: request.method,
        path: request.url,
        headers: { ...request.headers, host: base.host, 'x-forwarded-for': client },
        ...(base.protocol === 'https:' ? { ca: certPem } : {}),
        agent: false,
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    forwarded.on('error', () => response.writeHead(502).end());
    request.pipe(forwarded);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => proxy.close(resolve)));
  return `http://127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
}

async function start(env: Record<string, string>): Promise<ServerProcess> {
  const db = await createTestDatabase();
  cleanups.push(db.drop);
  return startServer(
    {
      DATABASE_URL: db.url,
      STELLWERK_ADMIN_EMAIL: ADMIN.email,
      STELLWERK_ADMIN_PASSWORD: ADMIN.password,
      STELLWERK_LOGIN_MAX_FAILURES_PER_CLIENT: String(MAX_FAILURES_PER_CLIENT),
      ...env,
    },
    120_000,
  );
}

beforeAll(async () => {
  dataDir = await tempDataDir('stellwerk-https-');
  cleanups.push(() => fs.rm(dataDir, { recursive: true, force: true }));
  const consoleDir = path.join(dataDir, 'console');
  await fs.mkdir(consoleDir);
  await fs.writeFile(
    path.join(consoleDir, 'index.html'),
    '<!doctype html><title>Stellwerk console over TLS</title>',
  );
  const plainDir = await tempDataDir('stellwerk-no-proxy-');
  cleanups.push(() => fs.rm(plainDir, { recursive: true, force: true }));
  [tlsServer, plainServer] = await Promise.all([
    start({
      STELLWERK_DATA_DIR: dataDir,
      STELLWERK_CONSOLE_DIR: consoleDir,
      STELLWERK_HTTPS: 'self-signed',
      STELLWERK_HTTP_REDIRECT_PORT: '0',
      STELLWERK_TRUST_PROXY: '127.0.0.1',
    }),
    start({ STELLWERK_DATA_DIR: plainDir }),
  ]);
  certPem = await fs.readFile(path.join(dataDir, 'tls', 'self-signed-cert.pem'), 'utf8');
  const redirectLine = tlsServer
    .output()
    .split('\n')
    .find((line) => line.includes('"httpRedirectPort"'));
  redirectPort = (JSON.parse(redirectLine!) as { httpRedirectPort: number }).httpRedirectPort;
}, 180_000);

afterAll(async () => {
  killSpawnedServers();
  for (const cleanup of cleanups.reverse()) await cleanup();
});

const httpsBase = () => `https://127.0.0.1:${tlsServer.httpPort}`;

async function login(base: string): Promise<string> {
  const reply = await call(`${base}/xapi/v1/auth/login`, { method: 'POST', body: ADMIN });
  expect(reply.status).toBe(200);
  return (JSON.parse(reply.text) as { token: string }).token;
}

describe('HTTPS with a self-signed certificate', () => {
  it('logs the fingerprint of the certificate it made in the data directory', () => {
    const fingerprint = new X509Certificate(certPem).fingerprint256;
    expect(tlsServer.output()).toContain(`HTTPS certificate SHA-256 fingerprint ${fingerprint}`);
  });

  it('serves the API and the console over TLS, with HSTS', async () => {
    const health = await call(`${httpsBase()}/xapi/v1/health`);
    expect(health.status).toBe(200);
    expect(health.headers['strict-transport-security']).toBe('max-age=31536000');
    const page = await call(`${httpsBase()}/`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Stellwerk console over TLS');
    // A client that does not trust the certificate is refused by TLS itself.
    await expect(
      new Promise((resolve, reject) =>
        https.get(`${httpsBase()}/xapi/v1/health`, resolve).on('error', reject),
      ),
    ).rejects.toThrow(/self-signed certificate/);
  });

  it('answers on the live WebSocket over TLS', async () => {
    const token = await login(httpsBase());
    const socket = new WebSocket(
      `wss://127.0.0.1:${tlsServer.httpPort}/xapi/v1/live`,
      ['stellwerk.live.v1', `bearer.${token}`],
      { ca: certPem },
    );
    const firstMessage = new Promise<{ type: string; notFound: string[] }>((resolve, reject) => {
      socket.once('message', (data: Buffer) => resolve(JSON.parse(data.toString('utf8')) as never));
      socket.once('error', reject);
    });
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    const unknownDevice = newId();
    socket.send(JSON.stringify({ subscribe: { deviceIds: [unknownDevice] } }));
    expect(await firstMessage).toMatchObject({ type: 'subscribed', notFound: [unknownDevice] });
    socket.close();
  });

  it('takes QoS 1 publishes over MQTT over WebSocket at /mqtt over TLS', async () => {
    const token = await login(httpsBase());
    const created = await call(`${httpsBase()}/xapi/v1/connectors`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: { type: 'mqtt-broker', title: 'Over TLS' },
    });
    expect(created.status).toBe(201);
    const connector = JSON.parse(created.text) as {
      id: string;
      credentials: { username: string; password: string };
    };
    const client = await mqtt.connectAsync(`wss://127.0.0.1:${tlsServer.httpPort}/mqtt`, {
      ...connector.credentials,
      ca: certPem,
      reconnectPeriod: 0,
      connectTimeout: 5000,
    });
    // Resolves on PUBACK: the broker behind the TLS port took it.
    await client.publishAsync(`connectors/${connector.id}/devices/d1/up`, '{"tls":true}', { qos: 1 });
    await client.endAsync();
  });

  it('redirects the plain HTTP port to the same path over HTTPS', async () => {
    const reply = await call(`http://127.0.0.1:${redirectPort}/xapi/v1/health?probe=1`, { method: 'POST' });
    expect(reply.status).toBe(308);
    expect(reply.headers.location).toBe(`${httpsBase()}/xapi/v1/health?probe=1`);
  });
});

/** Failed logins (a fresh e-mail each, so only the client's budget fills) until `count` statuses are seen. */
async function failedLogins(base: string, localAddress: string, count: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) {
    const reply = await call(`${base}/xapi/v1/auth/login`, {
      method: 'POST',
      body: { email: `nobody-${newId()}@stellwerk.test`, password: 'wrong password 123' },
      localAddress,
    });
    statuses.push(reply.status);
  }
  return statuses;
}

describe('behind a reverse proxy', () => {
  const exhausted = [...Array<number>(MAX_FAILURES_PER_CLIENT).fill(401), 429];

  it('with STELLWERK_TRUST_PROXY, two clients get separate login budgets and audit lines name the client', async () => {
    const proxy = await forwardingProxy(httpsBase());
    expect(await failedLogins(proxy, '127.0.0.2', MAX_FAILURES_PER_CLIENT + 1)).toEqual(exhausted);
    expect(await failedLogins(proxy, '127.0.0.3', 1)).toEqual([401]);

    const signedIn = await call(`${proxy}/xapi/v1/auth/login`, {
      method: 'POST',
      body: ADMIN,
      localAddress: '127.0.0.3',
    });
    const { token } = JSON.parse(signedIn.text) as { token: string };
    const key = await call(`${proxy}/xapi/v1/api-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: { title: 'Made through the proxy', permissions: [] },
      localAddress: '127.0.0.3',
    });
    expect(key.status).toBe(201);
    const audit = tlsServer
      .output()
      .split('\n')
      .find((line) => line.includes('"apiKey.create"'));
    expect(JSON.parse(audit!)).toMatchObject({
      audit: { action: 'apiKey.create', clientAddress: '127.0.0.3' },
    });
  });

  it('without it, every client behind the proxy shares the proxy address and its one budget', async () => {
    const proxy = await forwardingProxy(plainServer.baseUrl);
    expect(await failedLogins(proxy, '127.0.0.2', MAX_FAILURES_PER_CLIENT + 1)).toEqual(exhausted);
    expect(await failedLogins(proxy, '127.0.0.3', 1)).toEqual([429]);
    // Nor is a forwarded scheme believed: plain HTTP never claims HSTS.
    const health = await call(`${proxy}/xapi/v1/health`, { headers: { 'x-forwarded-proto': 'https' } });
    expect(health.status).toBe(200);
    expect(health.headers['strict-transport-security']).toBeUndefined();
  });
});
