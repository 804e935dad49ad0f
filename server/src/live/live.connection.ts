import type { WebSocket } from 'ws';
import type { LiveGrant } from './live.grant.js';
import type { LiveTopic } from './live.protocol.js';

/**
 * One console's WebSocket. Sends go straight to the socket while it keeps up; when the socket's
 * buffer is above HIGH_WATER, messages wait in a bounded queue, and when that is full the oldest
 * are dropped and counted (a live view wants the newest values, not a backlog). After drops the
 * client gets `{type:'dropped', count}` once the queue has drained.
 */

const HIGH_WATER_BYTES = 1024 * 1024;
const FLUSH_INTERVAL_MS = 25;

export interface LiveConnectionOptions {
  maxQueued: number;
  onDrop: (count: number) => void;
}

export class LiveConnection {
  /** Followed ids per topic (device ids, twin ids). */
  readonly subscriptions: Record<LiveTopic, Set<string>> = { devices: new Set(), twins: new Set() };
  private queue: string[] = [];
  private dropped = 0;
  private droppedUnreported = 0;
  private flushTimer: NodeJS.Timeout | undefined;
  private answeredPing = true;

  constructor(
    readonly socket: WebSocket,
    /** Re-read by the hub's re-checks: permissions, scopes or a public dashboard can change while it is open. */
    public grant: LiveGrant,
    private readonly options: LiveConnectionOptions,
  ) {
    socket.on('pong', () => (this.answeredPing = true));
  }

  /** Pings the peer; false when it never answered the previous ping (a dead connection). */
  heartbeat(): boolean {
    if (!this.answeredPing) return false;
    this.answeredPing = false;
    if (this.open) this.socket.ping();
    return true;
  }

  get open(): boolean {
    return this.socket.readyState === this.socket.OPEN;
  }

  get subscriptionCount(): number {
    return this.subscriptions.devices.size + this.subscriptions.twins.size;
  }

  get droppedTotal(): number {
    return this.dropped;
  }

  send(message: string): void {
    if (!this.open) return;
    if (this.queue.length === 0 && this.socket.bufferedAmount < HIGH_WATER_BYTES) {
      this.socket.send(message);
      return;
    }
    this.queue.push(message);
    if (this.queue.length > this.options.maxQueued) {
      const excess = this.queue.length - this.options.maxQueued;
      this.queue.splice(0, excess);
      this.dropped += excess;
      this.droppedUnreported += excess;
      this.options.onDrop(excess);
    }
    this.flushTimer ??= setInterval(() => this.flush(), FLUSH_INTERVAL_MS);
  }

  close(): void {
    this.stopFlushing();
    this.queue = [];
  }

  private flush(): void {
    if (!this.open) return this.close();
    while (this.queue.length > 0 && this.socket.bufferedAmount < HIGH_WATER_BYTES)
      this.socket.send(this.queue.shift()!);
    if (this.queue.length > 0) return;
    if (this.droppedUnreported > 0) {
      this.socket.send(JSON.stringify({ type: 'dropped', count: this.droppedUnreported }));
      this.droppedUnreported = 0;
    }
    this.stopFlushing();
  }

  private stopFlushing(): void {
    if (this.flushTimer) clearInterval(this.flushTimer);
    this.flushTimer = undefined;
  }
}
