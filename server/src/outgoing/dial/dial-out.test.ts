import http from 'node:http';
import net from 'node:net';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TargetGuard, TargetRefusedError, type Resolve } from '../target-guard.js';
import { DialOut } from './dial-out.js';

/**
 * DialOut against real sockets on loopback. Names are answered by a resolver handed to the guard
 * (the test's DNS), so a name can point at a private address without anything being dialled there:
 * the guard refuses in its lookup, before a connection is attempted.
 */

const log = pino({ enabled: false });

/** A resolver with fixed answers per name, counting how often it was asked. */
function dns(answers: Record<string, string[] | (() => string[])>) {
  const asked: string[] = [];
  const resolve: Resolve = (host) => {
    asked.push(host);
    const answer = answers[host];
    const addresses = typeof answer === 'function' ? answer() : (answer ?? []);
    return Promise.resolve(addresses.map((address) => ({ address, family: net.isIP(address) })));
  };
  return { resolve, asked };
}

/** The socket's first event: connected, or the error it failed with. */
const outcome = (socket: net.Socket) =>
  new Promise<{ connected: true } | { error: Error }>((resolve) => {
    socket.once('connect', () => resolve({ connected: true }));
    socket.once('error', (error) => resolve({ error }));
  });

let server: net.Server;
let port: number;
const accepted: net.Socket[] = [];

beforeAll(async () => {
  server = net.createServer((socket) => {
    accepted.push(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as net.AddressInfo).port;
});
afterAll(async () => {
  for (const socket of accepted) socket.destroy();
  await new Promise((resolve) => server.close(resolve));
});

describe('DialOut.socket', () => {
  it('refuses a private address literal before a socket is connected', async () => {
    const dial = new DialOut(new TargetGuard([]), log);
    for (const host of ['10.20.30.40', '[fd00::1]', '169.254.169.254', '::ffff:192.168.0.1']) {
      const socket = dial.socket({ host, port: 1883 });
      const result = await outcome(socket);
      expect(result, host).toEqual({ error: expect.any(TargetRefusedError) as Error });
      expect(socket.remoteAddress, host).toBeUndefined();
      expect(socket.bytesWritten, host).toBe(0);
    }
  });

  it('refuses a name that resolves to a private address in its lookup: the one resolution, no connection', async () => {
    const { resolve, asked } = dns({ 'broker.plant.test': ['10.1.2.3'] });
    const dial = new DialOut(new TargetGuard([], resolve), log);
    for (const tls of [undefined, {}]) {
      const socket = dial.socket({ host: 'broker.plant.test', port: 8883, ...(tls ? { tls } : {}) });
      const result = await outcome(socket);
      expect(result).toEqual({ error: expect.any(TargetRefusedError) as Error });
      expect((result as { error: TargetRefusedError }).error).toMatchObject({ address: '10.1.2.3' });
      expect(socket.remoteAddress).toBeUndefined();
    }
    expect(asked).toEqual(['broker.plant.test', 'broker.plant.test']);
  });

  it('connects to an allowed target, and to exactly the address it judged (no second resolution)', async () => {
    let answers = 0;
    // A rebinding name: loopback (allowed here) first, a private address on every later question.
    const { resolve, asked } = dns({
      'rebind.test': () => (answers++ === 0 ? ['127.0.0.1'] : ['10.9.9.9']),
    });
    const dial = new DialOut(new TargetGuard(['127.0.0.1'], resolve), log);
    const before = accepted.length;
    const socket = dial.socket({ host: 'rebind.test', port });
    expect(await outcome(socket)).toEqual({ connected: true });
    expect(socket.remoteAddress).toBe('127.0.0.1');
    expect(asked).toEqual(['rebind.test']);
    socket.destroy();
    const again = dial.socket({ host: 'rebind.test', port });
    expect(await outcome(again)).toEqual({ error: expect.any(TargetRefusedError) as Error });
    expect(accepted.length).toBe(before + 1);
  });

  it('refuses loopback unless the administrator allowed it', async () => {
    const strict = new DialOut(new TargetGuard([]), log);
    for (const host of ['127.0.0.1', 'localhost', '::1']) {
      expect(await outcome(strict.socket({ host, port })), host).toEqual({
        error: expect.any(TargetRefusedError) as Error,
      });
    }
    const allowed = new DialOut(new TargetGuard(['127.0.0.0/8']), log);
    const socket = allowed.socket({ host: '127.0.0.1', port });
    expect(await outcome(socket)).toEqual({ connected: true });
    socket.destroy();
  });
});

describe('DialOut.mqtt', () => {
  it('sends every connection attempt of mqtt.js through the guard, WebSockets included', async () => {
    const { resolve } = dns({ 'broker.plant.test': ['192.168.7.7'] });
    const dial = new DialOut(new TargetGuard([], resolve), log);
    for (const url of ['mqtt://10.1.2.3:1883', 'mqtts://broker.plant.test', 'ws://172.16.0.9:8080/mqtt']) {
      const client = dial.mqtt(url, { reconnectPeriod: 0, connectTimeout: 2000 });
      const error = await new Promise<Error>((done) => client.once('error', done));
      await client.endAsync(true);
      expect(error, url).toBeInstanceOf(TargetRefusedError);
    }
  });
});

describe('DialOut.fetch', () => {
  let web: http.Server;
  let origin: string;
  const seen: http.IncomingHttpHeaders[] = [];

  beforeAll(async () => {
    web = http.createServer((req, res) => {
      seen.push(req.headers);
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/to') {
        res.writeHead(302, { location: url.searchParams.get('location')! }).end();
        return;
      }
      if (url.pathname === '/big') {
        res.end(Buffer.alloc(4096, 'x'));
        return;
      }
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () =>
        res
          .writeHead(200, { 'content-type': 'application/json', 'x-answer': 'yes' })
          .end(JSON.stringify({ method: req.method, body, type: req.headers['content-type'] ?? null })),
      );
    });
    await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(web.address() as net.AddressInfo).port}`;
  });
  afterAll(async () => {
    web.closeAllConnections();
    await new Promise((resolve) => web.close(resolve));
  });

  const allowed = () =>
    new DialOut(new TargetGuard(['127.0.0.1'], dns({ 'internal.test': ['10.0.0.8'] }).resolve), log);

  it('talks HTTP to an allowed target like fetch', async () => {
    const response = await allowed().fetch(`${origin}/echo`, {
      method: 'POST',
      body: new URLSearchParams({ a: '1' }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-answer')).toBe('yes');
    expect(await response.json()).toEqual({
      method: 'POST',
      body: 'a=1',
      type: 'application/x-www-form-urlencoded;charset=UTF-8',
    });
  });

  it('judges every redirect hop again and keeps credentials to their origin', async () => {
    const dial = allowed();
    for (const location of ['http://10.1.2.3/', 'http://internal.test:8080/x', 'http://[::1]/']) {
      const hop = `${origin}/to?location=${encodeURIComponent(location)}`;
      await expect(dial.fetch(hop), location).rejects.toBeInstanceOf(TargetRefusedError);
    }
    const local = `${origin}/to?location=${encodeURIComponent('/echo')}`;
    expect((await dial.fetch(local, { headers: { authorization: 'Bearer x' } })).status).toBe(200);
    expect(seen.at(-1)?.authorization).toBe('Bearer x');
    const otherOrigin = origin.replace('127.0.0.1', 'localhost');
    const guard = new TargetGuard(['127.0.0.0/8', '::1']);
    const away = `${origin}/to?location=${encodeURIComponent(`${otherOrigin}/echo`)}`;
    expect(
      (await new DialOut(guard, log).fetch(away, { headers: { authorization: 'Bearer x' } })).status,
    ).toBe(200);
    expect(seen.at(-1)?.authorization).toBeUndefined();
    expect((await dial.fetch(local, { redirect: 'manual' })).status).toBe(302);
    await expect(dial.fetch(local, { redirect: 'error' })).rejects.toThrow('fetch failed');
  });

  it('fails the same way for a closed port, a peer that is no HTTP server, TLS to a plain port and a silent peer', async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as net.AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const talked: net.Socket[] = [];
    const talker = net.createServer((socket) => {
      talked.push(socket.on('error', () => undefined));
      socket.end('SSH-2.0-OpenSSH_9.6\r\n');
    });
    await new Promise<void>((resolve) => talker.listen(0, '127.0.0.1', resolve));
    const talkerPort = (talker.address() as net.AddressInfo).port;
    const dial = allowed();
    try {
      const failures = await Promise.all(
        [
          `http://127.0.0.1:${closedPort}/`,
          `http://127.0.0.1:${talkerPort}/`,
          `https://127.0.0.1:${talkerPort}/`,
          `http://127.0.0.1:${port}/`,
        ].map((url) =>
          dial.fetch(url, { signal: AbortSignal.timeout(500) }).then(
            () => new Error(`${url} answered`),
            (error: Error) => error,
          ),
        ),
      );
      for (const failure of failures) {
        expect(failure).toBeInstanceOf(TypeError);
        expect(failure.message).toBe('fetch failed');
      }
    } finally {
      for (const socket of talked) socket.destroy();
      await new Promise((resolve) => talker.close(resolve));
    }
  });

  it('limits the size of the answer', async () => {
    const response = await allowed().fetch(`${origin}/big`, { maxResponseBytes: 1000 });
    await expect(response.text()).rejects.toThrow('fetch failed');
  });
});
