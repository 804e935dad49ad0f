import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import type { RawData, WebSocket } from 'ws';
import type { Principal } from '../auth/principal.js';
import type { VisibleUpdate } from '../ingest/visible.stage.js';
import type { Lifecycle } from '../platform/lifecycle.js';
import type { Metrics } from '../platform/metrics.js';
import type { StateChange } from '../states/engine/state-work.js';
import type { AlarmEntry } from '../integration/ports.js';
import { alarmsRefusal, LiveAlarmFollowers } from './live.alarms.js';
import { principalGrant, type LiveGrant } from './live.grant.js';
import { LiveConnection } from './live.connection.js';
import { recheckConnection } from './live.recheck.js';
import { ShownStates } from './live.shown-states.js';
import { packetEntry, parseRequest, stateEntry, type LiveRequest, type LiveTopic } from './live.protocol.js';
import type { ErrorCode } from '../platform/error-codes.js';

/**
 * Live push of device packets and twin data-state changes to consoles (`GET /xapi/v1/live`, docs/live.md).
 *
 * Client → server: `{"subscribe":{"deviceIds":[…],"twinIds":[…],"alarms":true}}`, `{"unsubscribe":{…}}`.
 * Server → client: `{type:'subscribed', deviceIds, twinIds, notFound}`, `{type:'unsubscribed', deviceIds, twinIds}`,
 * `{type:'packets', packets:[{deviceId, receivedAt, states}, …]}`,
 * `{type:'states', states:[{twinId, stateId, key, value, timestamp, warning?}, …]}`,
 * `{type:'alarms', alarms:[{id, status, severity, occurrenceCount, lastSeenAt, …}, …]}`,
 * `{type:'dropped', count}`, `{type:'error', error}`. Alarm entries go only to followers that could
 * read each one over the API (alarmLog.read, its account reachable, visible within their scopes).
 * Visibility is checked when subscribing (tenancy and permission scopes), and again — with the
 * principal's permissions and scopes re-read — right after twins, devices or users changed their
 * scopes or places (`visibilityChanged`) and every minute: ids no longer visible are unfollowed and
 * reported as `{type:'unsubscribed', deviceIds, twinIds, reason:'notVisible'}`. The socket is closed
 * with 4401 once the credential is revoked or expired.
 */

export { LIVE_PERMISSIONS } from './live.grant.js';

export { LIVE_ALARMS_PERMISSION } from './live.alarms.js';

export const LIVE_LIMITS = {
  /** Ids (devices and twins together) one connection may follow. */
  maxSubscriptions: 5000,
  /** Ids (devices and twins together) per subscribe message. */
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
  private readonly followers: Record<LiveTopic, Map<string, Set<LiveConnection>>> = {
    devices: new Map(),
    twins: new Map(),
  };
  private readonly alarms: LiveAlarmFollowers;
  private readonly shownStates = new ShownStates();
  private twinsFollowedChanges = 0;
  private timer: NodeJS.Timeout | undefined;
  /** A re-check of every connection requested by `visibilityChanged`, run once for a burst of changes. */
  private recheckPending: Promise<void> | undefined;
  private readonly followedListeners: Array<(deviceIds: string[]) => void> = [];
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
    this.sent = metrics.counter(
      'stellwerk_live_messages_total',
      'Live updates queued to consoles (one per entry and console), by kind (packets, states, alarms)',
      ['kind'],
    );
    this.alarms = new LiveAlarmFollowers(em, log, limits.maxQueued, {
      sent: (n) => this.sent.inc({ kind: 'alarms' }, n),
      dropped: (n) => this.dropped.inc(n),
    });
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

  /** Devices no console followed before, as consoles start following them (the live view preloads them). */
  onDevicesFollowed(listener: (deviceIds: string[]) => void): void {
    this.followedListeners.push(listener);
  }

  /**
   * Twins, devices or users changed scopes, places or permissions: every connection's principal
   * and subscriptions are checked again at once (one round for a burst of changes). Resolves when
   * that round is done.
   */
  visibilityChanged(): Promise<void> {
    this.recheckPending ??= Promise.resolve()
      .then(() => {
        this.recheckPending = undefined;
        return this.recheckAll();
      })
      .catch((error: unknown) => this.log.warn({ err: error }, 'live push: visibility re-check failed'));
    return this.recheckPending;
  }

  /** Whether any console follows this device (the visible stage parses only such devices' packets). */
  followsDevice(deviceId: string): boolean {
    return this.followers.devices.has(deviceId);
  }

  /**
   * Pushes device state updates to the consoles that follow each device, before the batch commits
   * (ADR 0092): one `packets` message per console per call, so a batch costs one frame, not one per packet.
   */
  publish(updates: VisibleUpdate[]): void {
    this.fanOut('devices', 'packets', updates, (u) => u.deviceId, packetEntry);
  }

  /**
   * Same as `publish`, for updates the ingest worker already encoded (`packetEntry`): `entries[i]`
   * is the entry of an update of device `deviceIds[i]` (ADR 0102).
   */
  publishEncoded(deviceIds: readonly string[], entries: readonly string[]): void {
    this.fanOut(
      'devices',
      'packets',
      deviceIds.keys(),
      (i) => deviceIds[i]!,
      (i) => entries[i]!,
    );
  }

  /** Whether any console follows this twin (twin states are shown on arrival only for such twins). */
  followsTwin(twinId: string): boolean {
    return this.followers.twins.has(twinId);
  }

  /** Changes whenever a twin gains its first follower or loses its last (TwinStatesOnArrival's cache). */
  followedTwinsVersion(): number {
    return this.twinsFollowedChanges;
  }

  /**
   * Pushes twin data-state changes to the consoles that follow each twin, after the state engine's
   * transaction committed (StateEngine.onStateChanges): one `states` message per console per call.
   * Changes marked `shownLive` were pushed on their packet's arrival (`publishArrivedStates`) and
   * are skipped, unless the consoles were not shown that value after all (ShownStates.covers).
   */
  publishStates(changes: StateChange[]): void {
    if (this.followers.twins.size === 0) return;
    const fresh = changes.some((c) => c.shownLive)
      ? changes.filter((c) => !c.shownLive || (this.followsTwin(c.twinId) && !this.shownStates.covers(c)))
      : changes;
    if (fresh.length === 0) return;
    this.shownStates.pushed(fresh, (twinId) => this.followsTwin(twinId));
    this.fanOutStates(fresh);
  }

  /**
   * Pushes the twin states a packet sets directly as it arrives, before its commit (ADR 0135,
   * TwinStatesOnArrival), leaving out values the consoles already show for those states.
   */
  publishArrivedStates(changes: StateChange[]): void {
    this.fanOutStates(this.shownStates.arrived(changes));
  }

  private fanOutStates(changes: StateChange[]): void {
    this.fanOut(
      'twins',
      'states',
      changes,
      (c) => c.twinId,
      stateEntry,
      (c, change) => (c.grant.states === null ? true : c.grant.states.has(change.stateId)),
    );
  }

  /**
   * Pushes committed alarm changes to the consoles following alarms, each entry only to those that
   * could read it over the API (tenancy, permission scopes): one `alarms` message per console.
   */
  publishAlarms(entries: AlarmEntry[]): Promise<void> {
    return this.alarms.publish(entries);
  }

  /** One `{"type":kind, kind:[…]}` message per console following any of `items`, entries in order. */
  private fanOut<T>(
    topic: LiveTopic,
    kind: 'packets' | 'states',
    items: Iterable<T>,
    idOf: (item: T) => string,
    encode: (item: T) => string,
    /** Whether a follower gets this item (a public dashboard's socket: only its states). */
    shows: (c: LiveConnection, item: T) => boolean = () => true,
  ): void {
    const index = this.followers[topic];
    if (index.size === 0) return;
    const perConnection = new Map<LiveConnection, string[]>();
    let sent = 0;
    for (const item of items) {
      const followers = index.get(idOf(item));
      if (!followers) continue;
      const entry = encode(item);
      for (const c of followers) {
        if (!shows(c, item)) continue;
        sent++;
        const entries = perConnection.get(c);
        if (entries) entries.push(entry);
        else perConnection.set(c, [entry]);
      }
    }
    for (const [c, entries] of perConnection) c.send(`{"type":"${kind}","${kind}":[${entries.join(',')}]}`);
    if (sent > 0) this.sent.inc({ kind }, sent);
  }

  /** Takes over an upgraded socket of an authenticated principal. */
  attach(socket: WebSocket, principal: Principal): void {
    this.attachGrant(socket, principalGrant(this.em, principal));
  }

  /** Takes over an upgraded socket that may follow what `grant` allows (a public dashboard's viewer). */
  attachGrant(socket: WebSocket, grant: LiveGrant): void {
    const connection = new LiveConnection(socket, grant, {
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
    this.alarms.unfollow(connection);
    for (const topic of TOPICS)
      for (const id of [...connection.subscriptions[topic]]) this.unfollow(connection, topic, id);
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
      for (const topic of TOPICS)
        for (const id of idsOf(request, topic)) this.unfollow(connection, topic, id);
      if (request.alarms) this.alarms.unfollow(connection);
      return connection.send(
        JSON.stringify({
          type: 'unsubscribed',
          deviceIds: request.deviceIds,
          twinIds: request.twinIds,
          ...(request.alarms ? { alarms: true } : {}),
        }),
      );
    }
    return this.subscribe(connection, request);
  }

  private async subscribe(connection: LiveConnection, request: LiveRequest): Promise<void> {
    const { grant, subscriptions } = connection;
    for (const topic of TOPICS) {
      const refusal = idsOf(request, topic).length > 0 ? grant.refusal(topic) : null;
      if (refusal) {
        // The HTTP error of a missing permission, as a message: the socket stays open for the other topic.
        return this.reject(connection, refusal.message, refusal.code, refusal.details);
      }
    }
    const alarmsRefused = request.alarms ? alarmsRefusal(grant) : null;
    if (alarmsRefused)
      return this.reject(connection, alarmsRefused.message, alarmsRefused.code, alarmsRefused.details);
    const freshDevices = request.deviceIds.filter((id) => !subscriptions.devices.has(id));
    const freshTwins = request.twinIds.filter((id) => !subscriptions.twins.has(id));
    if (connection.subscriptionCount + freshDevices.length + freshTwins.length > this.limits.maxSubscriptions)
      return this.reject(connection, `At most ${this.limits.maxSubscriptions} ids per connection`);
    let visible: [Set<string>, Set<string>];
    try {
      visible = await Promise.all([
        grant.visible('devices', freshDevices),
        grant.visible('twins', freshTwins),
      ]);
    } catch (error) {
      this.log.warn({ err: error }, 'live push: visibility check failed');
      return this.reject(connection, 'Subscription failed; retry', 'UNAVAILABLE');
    }
    if (!connection.open) return;
    const newlyFollowed = [...visible[0]].filter((id) => !this.followers.devices.has(id));
    for (const id of visible[0]) this.follow(connection, 'devices', id);
    for (const id of visible[1]) this.follow(connection, 'twins', id);
    if (request.alarms) this.alarms.follow(connection);
    if (newlyFollowed.length > 0) for (const listener of this.followedListeners) listener(newlyFollowed);
    const deviceIds = request.deviceIds.filter((id) => subscriptions.devices.has(id));
    const twinIds = request.twinIds.filter((id) => subscriptions.twins.has(id));
    const notFound = [
      ...request.deviceIds.filter((id) => !subscriptions.devices.has(id)),
      ...request.twinIds.filter((id) => !subscriptions.twins.has(id)),
    ];
    connection.send(
      JSON.stringify({
        type: 'subscribed',
        deviceIds,
        twinIds,
        notFound,
        ...(request.alarms ? { alarms: true } : {}),
      }),
    );
  }

  private reject(
    connection: LiveConnection,
    message: string,
    code: ErrorCode = 'VALIDATION_ERROR',
    details: unknown[] = [],
  ): void {
    connection.send(JSON.stringify({ type: 'error', error: { code, message, details } }));
  }

  private follow(connection: LiveConnection, topic: LiveTopic, id: string): void {
    connection.subscriptions[topic].add(id);
    // A new follower reads the twin's committed states; its next arrivals are pushed whatever the
    // others were shown, so a value committed after that read is never left out as "already shown".
    if (topic === 'twins') this.shownStates.forget(id);
    const index = this.followers[topic];
    let followers = index.get(id);
    if (!followers) {
      index.set(id, (followers = new Set()));
      if (topic === 'twins') this.twinsFollowedChanges++;
    }
    followers.add(connection);
  }

  private unfollow(connection: LiveConnection, topic: LiveTopic, id: string): void {
    connection.subscriptions[topic].delete(id);
    const index = this.followers[topic];
    const followers = index.get(id);
    followers?.delete(connection);
    if (followers?.size !== 0) return;
    index.delete(id);
    if (topic !== 'twins') return;
    this.shownStates.forget(id);
    this.twinsFollowedChanges++;
  }

  /** Pings (dead peers are terminated) and re-checks credentials and visibility. */
  private async housekeeping(): Promise<void> {
    for (const c of [...this.connections]) {
      if (!c.heartbeat()) c.socket.terminate();
    }
    await this.recheckAll();
  }

  private async recheckAll(): Promise<void> {
    for (const c of [...this.connections]) {
      try {
        await recheckConnection(c, this.clock(), this.alarms, (topic, id) => this.unfollow(c, topic, id));
      } catch {
        // Database briefly unavailable: check again next round.
      }
    }
  }
}

const TOPICS: readonly LiveTopic[] = ['devices', 'twins'];

const idsOf = (request: LiveRequest, topic: LiveTopic): string[] =>
  topic === 'devices' ? request.deviceIds : request.twinIds;

const rawText = (data: RawData): string =>
  (Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer)).toString('utf8');
