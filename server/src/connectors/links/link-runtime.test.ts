import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { once } from 'node:events';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { PacketRefusedError, type IncomingPacket } from '../../ingest/ingest.types.js';
import { DialOut } from '../../outgoing/dial/dial-out.js';
import { TargetGuard } from '../../outgoing/target-guard.js';
import { SecretBox } from '../../platform/crypto/secret-box.js';
import { Metrics } from '../../platform/metrics.js';
import type { Connector } from '../connector.entity.js';
import { LinkRuntime } from './link-runtime.js';
import { LinkError, type LinkDriver, type LinkSession } from './link.types.js';

/**
 * The link runtime against a real TCP peer on loopback: a line protocol whose every line is a
 * packet `<device>:<payload>`. The packet store and the connector log are in-memory recorders of
 * what the runtime hands them (the database-backed ones are covered by the kinds' integration tests).
 */

const log = pino({ enabled: false });

function lineDriver(port: () => number, opens: { count: number }, refuseLogin = false): LinkDriver {
  return {
    target: () => `127.0.0.1:${port()}`,
    open(ctx) {
      opens.count += 1;
      if (refuseLogin) return Promise.reject(new LinkError('The peer refused the login'));
      return new Promise<LinkSession>((resolve, reject) => {
        const socket = ctx.dial.socket({ host: '127.0.0.1', port: port() }, () => {
          const closed = new Promise<string>((done) =>
            socket.once('close', () => done('peer closed the connection')),
          );
          resolve({ closed, close: async () => void socket.destroy() });
        });
        socket.once('error', reject);
        let buffer = '';
        socket.on('data', (chunk: Buffer) => {
          buffer += chunk.toString();
          for (let i = buffer.indexOf('\n'); i >= 0; i = buffer.indexOf('\n')) {
            const line = buffer.slice(0, i);
            buffer = buffer.slice(i + 1);
            const colon = line.indexOf(':');
            const packet = { deviceKey: line.slice(0, colon), payload: Buffer.from(line.slice(colon + 1)) };
            void ctx.packet(packet).catch(() => undefined);
          }
        });
      });
    },
  };
}

interface Recorded {
  packets: IncomingPacket[];
  logs: Array<{ level: string; message: string }>;
  counts: Record<string, number>;
}

function runtime(refuse?: (p: IncomingPacket) => Error | undefined) {
  const recorded: Recorded = { packets: [], logs: [], counts: { in: 0, failed: 0 } };
  const links = new LinkRuntime({
    orm: undefined as never,
    sink: {
      append: async (packet) => {
        const error = refuse?.(packet);
        if (error) throw error;
        recorded.packets.push(packet);
      },
    },
    telemetry: {
      record: (_id, result, count = 1) =>
        void (recorded.counts[result] = (recorded.counts[result] ?? 0) + count),
      write: async (_id, level, message) => void recorded.logs.push({ level, message }),
    },
    secretBox: new SecretBox(randomBytes(32)),
    dial: new DialOut(new TargetGuard(['127.0.0.1/32']), log),
    log,
    metrics: new Metrics({}, { processMetrics: false }),
    backoff: { minMs: 20, maxMs: 80 },
  });
  return { links, recorded };
}

const connector = (type = 'line') =>
  ({ id: 'c0ffee00-0000-4000-8000-000000000001', type, config: {} }) as Connector;

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i += 1) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const servers: net.Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

async function peer(port = 0): Promise<{ server: net.Server; port: number; sockets: net.Socket[] }> {
  const sockets: net.Socket[] = [];
  const server = net.createServer((s) => sockets.push(s));
  servers.push(server);
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as net.AddressInfo).port, sockets };
}

describe('connector links', () => {
  it('stores what the peer sends, reconnects after the peer went away and logs both', async () => {
    const first = await peer();
    const opens = { count: 0 };
    const { links, recorded } = runtime();
    links.register(
      'line',
      lineDriver(() => first.port, opens),
    );
    await links.startLink(connector());
    await until(() => links.isConnected(connector().id) && first.sockets.length === 1, 'the link');
    first.sockets[0]!.write('meter-1:{"kWh":1}\n');
    await until(() => recorded.packets.length === 1, 'the packet');
    expect(recorded.packets[0]).toMatchObject({ deviceKey: 'meter-1', source: 'line' });
    expect(recorded.packets[0]!.payload.toString()).toBe('{"kWh":1}');

    // The peer goes away: the link is down, the log says so; it comes back on the same port.
    first.sockets[0]!.destroy();
    first.server.close();
    await until(() => !links.isConnected(connector().id), 'the drop');
    const second = await peer(first.port);
    await until(() => links.isConnected(connector().id) && second.sockets.length === 1, 'the reconnect');
    second.sockets[0]!.write('meter-1:{"kWh":2}\n');
    await until(() => recorded.packets.length === 2, 'the second packet');
    expect(recorded.logs.map((l) => l.level)).toEqual(expect.arrayContaining(['info', 'warn']));
    expect(recorded.logs.find((l) => l.level === 'warn')!.message).toContain('peer closed the connection');
    await links.stop();
    expect(links.isConnected(connector().id)).toBe(false);
  });

  it('keeps what a kind keeps across the reconnects of one run, and starts afresh on the next run', async () => {
    const seen: Array<{ opens: number }> = [];
    const { links } = runtime();
    links.register('line', {
      target: () => 'nowhere',
      open(ctx) {
        const kept = ctx.kept('opens', () => ({ opens: 0 }));
        kept.opens += 1;
        seen.push(kept);
        return Promise.reject(new LinkError('The peer refused the login'));
      },
    });
    await links.startLink(connector());
    await until(() => seen.length >= 3, 'three attempts');
    await links.stopLink(connector().id);
    expect(new Set(seen).size).toBe(1);
    expect(seen[0]!.opens).toBe(seen.length);
    await links.startLink(connector());
    await until(() => seen.length > seen[0]!.opens, 'an attempt of the next run');
    await links.stop();
    expect(seen.at(-1)).not.toBe(seen[0]);
    expect(seen.at(-1)!.opens).toBeGreaterThanOrEqual(1);
  });

  it('logs a run of equal failures once and backs off between attempts', async () => {
    const opens = { count: 0 };
    const { links, recorded } = runtime();
    links.register(
      'line',
      lineDriver(() => 1, opens, true),
    );
    await links.startLink(connector());
    await until(() => opens.count >= 4, 'several attempts');
    await links.stopLink(connector().id);
    const errors = recorded.logs.filter((l) => l.level === 'error');
    expect(errors).toEqual([{ level: 'error', message: 'The peer refused the login' }]);
    const attempts = opens.count;
    await new Promise((r) => setTimeout(r, 200));
    expect(opens.count).toBe(attempts);
  });

  it('tells a tenant only that a connection could not be made, and what the guard refused', async () => {
    const closedPort = (await peer()).port;
    servers.pop()!.close();
    const { links, recorded } = runtime();
    links.register(
      'line',
      lineDriver(() => closedPort, { count: 0 }),
    );
    await links.startLink(connector());
    await until(() => recorded.logs.length > 0, 'a failure');
    await links.stop();
    expect(recorded.logs[0]!.message).toMatch(/^Could not connect to 127\.0\.0\.1:\d+; an administrator/);

    // A private IP literal is refused by the guard before any socket exists: nothing leaves loopback.
    const guarded = runtime();
    guarded.links.register('line', {
      target: () => '10.0.0.1:2404',
      open: (ctx) =>
        new Promise((_resolve, reject) =>
          ctx.dial.socket({ host: '10.0.0.1', port: 2404 }).once('error', reject),
        ),
    });
    await guarded.links.startLink(connector());
    await until(() => guarded.recorded.logs.length > 0, 'the refusal');
    await guarded.links.stop();
    expect(guarded.recorded.logs[0]!.message).toContain('STELLWERK_OUTGOING_ALLOW_PRIVATE');
  });

  it('counts refused packets as failed and lets transient refusals reach the kind', async () => {
    const p = await peer();
    const { links, recorded } = runtime((packet) =>
      packet.deviceKey === 'unknown'
        ? new PacketRefusedError('INGEST_INVALID', 'no such device')
        : packet.deviceKey === 'busy'
          ? new PacketRefusedError('INGEST_BUSY', 'busy')
          : undefined,
    );
    const results: string[] = [];
    links.register('line', {
      target: () => `127.0.0.1:${p.port}`,
      open: (ctx) =>
        new Promise((resolve) => {
          const socket = ctx.dial.socket({ host: '127.0.0.1', port: p.port }, () => {
            for (const key of ['unknown', 'busy', ''])
              ctx.packet({ deviceKey: key, payload: Buffer.from('1') }).then(
                () => results.push(`${key}:stored-or-refused`),
                () => results.push(`${key}:retry`),
              );
            resolve({ closed: new Promise(() => {}), close: async () => void socket.destroy() });
          });
        }),
    });
    await links.startLink(connector());
    await until(() => results.length === 3, 'three results');
    await links.stop();
    expect(results.sort()).toEqual([':stored-or-refused', 'busy:retry', 'unknown:stored-or-refused']);
    expect(recorded.counts).toEqual({ in: 0, failed: 3 });
    expect(recorded.logs.filter((l) => l.level === 'warn').map((l) => l.message)).toEqual(
      expect.arrayContaining(['Packet refused: no such device', 'Packet refused: no usable device id']),
    );
  });

  it('counts an open link as connected only while its session says so (a server link without peers)', async () => {
    const { links } = runtime();
    let peers = 0;
    links.register('server', {
      target: () => 'udp://127.0.0.1:5683',
      open: async () => ({
        closed: new Promise(() => {}),
        close: async () => {},
        connected: () => peers > 0,
      }),
    });
    await links.startLink(connector('server'));
    await until(() => links.session(connector().id) !== undefined, 'the session');
    expect(links.isConnected(connector().id)).toBe(false);
    peers = 1;
    expect(links.isConnected(connector().id)).toBe(true);
    await links.stop();
  });
});
