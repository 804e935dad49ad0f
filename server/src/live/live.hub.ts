import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import type { RawData, WebSocket } from 'ws';
import type { Principal } from '../auth/principal.js';
import type { VisibleUpdate } from '../ingest/visible.stage.js';
import { isUuid } from '../platform/crypto/ids.js';
import type { Lifecycle } from '../platform/lifecycle.js';
import type { Metrics } from '../platform/metrics.js';
import { credentialValid, visibleDevices } from './live.access.js';
import { LiveConnection } from './live.connection.js';

/**
 * Live push of device packets to consoles (`GET /xapi/v1/live`, docs/live.md).
 *
 * Client → server: `{"subscribe":{"deviceIds":[…]}}`, `{"unsubscribe":{"deviceIds":[…]}}`.
 * Server → client: `{type:'subscribed', deviceIds, notFound}`, `{type:'unsubscribed', deviceIds}`,
 * `{type:'packets', packets:[{deviceId, receivedAt, states}, …]}`, `{type:'dropped', count}`, `{type:'error', error}`.
 * Visibility is checked when subscribing (tenancy and permission scopes); the credential is
 * re-checked every minute and the socket closed with 4401 once it is revoked or expired.
 */

export const LIVE_LIMITS = {
  /** Device ids one connection may follow. */
  maxSubscriptions: 5000,
  /** Device ids per subscribe message. */
  maxIdsPerMessage: 1000,
  maxMessageBytes: 64 * 1024,
  /** Messages waiting per connection before the oldest are dropped. */
  maxQueued: 1000,
  recheckMs: 60_000,
  pingMs: 30_000,
};

export class LiveHub implements Lifecycle {
  readonly name = 'live-push';
  private readonly connections = new Set<LiveConnection>();
  private readonly byDevice = new Map<string, Set<LiveConnection>>();
  private timer: NodeJS.Timeout | undefined;
  private readonly dropped;
  private readonly sent;

  constructor(
    private readonly em: () => EntityManager,
    private readonly log: FastifyBaseLogger,
    metrics: Metrics,
    private readonly clock: () => Date = () => new Date(),
    private readonly limits = LIVE_LIMITS,
  ) {
    this.dropped = metrics.counter('stellwerk_live_dropped_total', 'Live messages dropped for slow consoles');
    this.sent = metrics.counter('stellwerk_live_messages_total', 'Live packet messages queued to consoles');
    metrics.gauge('stellwerk_live_connections', 'Open live WebSocket connections', [], (g) =>
      g.set(this.connections.size),
    );
  }

  async start(): Promise<void> {
    this.timer ??= setInterval(
      () => void this.housekeeping(),
      Math.min(this.limits.pingMs, this.limits.recheckMs),
    );
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    for (const c of this.connections) c.socket.close(1001, 'server stopping');
  }

  /**
   * Pushes state updates to the consoles that follow each device (before commit: ADR 0092): one
   * `packets` message per console per call, so a batch of updates costs one frame, not one per packet.
   */
  publish(updates: VisibleUpdate[]): void {
    const perConnection = new Map<LiveConnection, string[]>();
    let sent = 0;
    for (const u of updates) {
      const followers = this.byDevice.get(u.deviceId);
      if (!followers) continue;
      const item = JSON.stringify({
        deviceId: u.deviceId,
        receivedAt: u.receivedAt.toISOString(),
        states: u.states,
      });
      for (const c of followers) {
        const items = perConnection.get(c);
        if (items) items.push(item);
        else perConnection.set(c, [item]);
      }
      sent += followers.size;
    }
    for (const [c, items] of perConnection) c.send(`{"type":"packets","packets":[${items.join(',')}]}`);
    if (sent > 0) this.sent.inc(sent);
  }

  /** Takes over an upgraded socket of an authenticated principal. */
  attach(socket: WebSocket, principal: Principal): void {
    const connection = new LiveConnection(socket, principal, {
      maxQueued: this.limits.maxQueued,
      onDrop: (n) => this.dropped.inc(n),
    });
    this.connections.add(connection);
    socket.on('message', (data, isBinary) => void this.onMessage(connection, data, isBinary));
    socket.on('close', () => this.detach(connection));
    socket.on('error', () => socket.terminate());
  }

  private detach(connection: LiveConnection): void {
    connection.close();
    this.connections.delete(connection);
    for (const id of connection.subscriptions) this.unfollow(connection, id);
  }

  private async onMessage(connection: LiveConnection, data: RawData, isBinary: boolean): Promise<void> {
    const size = Array.isArray(data) ? data.reduce((n, b) => n + b.length, 0) : data.byteLength;
    if (isBinary || size > this.limits.maxMessageBytes)
      return this.reject(connection, 'Send JSON text messages of at most 64 KiB');
    let message: unknown;
    try {
      message = JSON.parse(rawText(data));
    } catch {
      return this.reject(connection, 'Messages must be JSON');
    }
    const request = parseRequest(message, this.limits.maxIdsPerMessage);
    if (typeof request === 'string') return this.reject(connection, request);
    if (request.kind === 'unsubscribe') {
      for (const id of request.deviceIds) this.unfollow(connection, id);
      return connection.send(JSON.stringify({ type: 'unsubscribed', deviceIds: request.deviceIds }));
    }
    const fresh = request.deviceIds.filter((id) => !connection.subscriptions.has(id));
    if (connection.subscriptions.size + fresh.length > this.limits.maxSubscriptions)
      return this.reject(connection, `At most ${this.limits.maxSubscriptions} devices per connection`);
    let visible: Set<string>;
    try {
      visible = await visibleDevices(this.em, connection.principal, fresh);
    } catch (error) {
      this.log.warn({ err: error }, 'live push: visibility check failed');
      return this.reject(connection, 'Subscription failed; retry', 'UNAVAILABLE');
    }
    if (!connection.open) return;
    for (const id of visible) this.follow(connection, id);
    const deviceIds = request.deviceIds.filter((id) => connection.subscriptions.has(id));
    const notFound = request.deviceIds.filter((id) => !connection.subscriptions.has(id));
    connection.send(JSON.stringify({ type: 'subscribed', deviceIds, notFound }));
  }

  private reject(connection: LiveConnection, message: string, code = 'VALIDATION_ERROR'): void {
    connection.send(JSON.stringify({ type: 'error', error: { code, message, details: [] } }));
  }

  private follow(connection: LiveConnection, deviceId: string): void {
    connection.subscriptions.add(deviceId);
    let followers = this.byDevice.get(deviceId);
    if (!followers) this.byDevice.set(deviceId, (followers = new Set()));
    followers.add(connection);
  }

  private unfollow(connection: LiveConnection, deviceId: string): void {
    connection.subscriptions.delete(deviceId);
    const followers = this.byDevice.get(deviceId);
    followers?.delete(connection);
    if (followers?.size === 0) this.byDevice.delete(deviceId);
  }

  /** Pings (dead peers are terminated) and re-checks credentials. */
  private async housekeeping(): Promise<void> {
    for (const c of [...this.connections]) {
      if (!c.heartbeat()) {
        c.socket.terminate();
        continue;
      }
      try {
        if (!(await credentialValid(this.em, c.principal, this.clock())))
          c.socket.close(4401, 'credential revoked or expired');
      } catch {
        // Database briefly unavailable: check again next round.
      }
    }
  }
}

type LiveRequest = { kind: 'subscribe' | 'unsubscribe'; deviceIds: string[] };

function parseRequest(message: unknown, maxIds: number): LiveRequest | string {
  if (typeof message !== 'object' || message === null) return 'Expected {"subscribe":{"deviceIds":[…]}}';
  const body = message as Record<string, unknown>;
  const kind = 'subscribe' in body ? 'subscribe' : 'unsubscribe' in body ? 'unsubscribe' : undefined;
  if (!kind) return 'Expected {"subscribe":{"deviceIds":[…]}} or {"unsubscribe":{"deviceIds":[…]}}';
  const ids = (body[kind] as { deviceIds?: unknown } | null)?.deviceIds;
  if (!Array.isArray(ids) || ids.length > maxIds || !ids.every((id) => typeof id === 'string' && isUuid(id)))
    return `${kind}.deviceIds must be an array of at most ${maxIds} device ids (UUIDs)`;
  return { kind, deviceIds: [...new Set(ids as string[])].map((id) => id.toLowerCase()) };
}

const rawText = (data: RawData): string =>
  (Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer)).toString('utf8');
