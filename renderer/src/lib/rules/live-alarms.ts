/**
 * Follows alarm changes over the live WebSocket (`{"subscribe":{"alarms":true}}`, docs/live.md) on
 * one connection for the whole console: the navigation badge and the alarms page listen to it.
 * The server sends only entries this user may read. After a reconnect listeners are told to re-read
 * (changes may have happened while the socket was down).
 */

export interface LiveAlarm {
  id: string;
  status: 'open' | 'acknowledged' | 'closed';
  severity: string;
  occurrenceCount: number;
  lastSeenAt: string;
  message: string;
}

/** `alarms` with the changed entries; `resync` after a (re)connect, when anything may have changed. */
export type LiveAlarmListener = (event: { kind: 'alarms'; alarms: LiveAlarm[] } | { kind: 'resync' }) => void;

const PROTOCOL = 'stellwerk.live.v1';
const MAX_RETRY_MS = 30_000;

class LiveAlarms {
  private readonly listeners = new Set<LiveAlarmListener>();
  private socket: WebSocket | undefined;
  private retryMs = 1000;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private connectedBefore = false;

  /** Starts following while anyone listens; returns the function that stops listening. */
  listen(listener: LiveAlarmListener): () => void {
    this.listeners.add(listener);
    if (!this.socket && !this.timer) this.connect();
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.disconnect();
    };
  }

  private emit(event: Parameters<LiveAlarmListener>[0]): void {
    for (const listener of [...this.listeners]) listener(event);
  }

  private connect(): void {
    this.timer = undefined;
    const url = new URL('/xapi/v1/live', window.location.href);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    url.hash = '';
    url.search = '';
    const socket = new WebSocket(url, [PROTOCOL]);
    this.socket = socket;
    socket.addEventListener('open', () => socket.send(JSON.stringify({ subscribe: { alarms: true } })));
    socket.addEventListener('message', (event) => {
      let message: { type?: string; alarms?: LiveAlarm[] };
      try {
        message = JSON.parse(String(event.data)) as typeof message;
      } catch {
        return;
      }
      if (message.type === 'subscribed') {
        this.retryMs = 1000;
        if (this.connectedBefore) this.emit({ kind: 'resync' });
        this.connectedBefore = true;
      } else if (message.type === 'alarms' && message.alarms)
        this.emit({ kind: 'alarms', alarms: message.alarms });
      else if (message.type === 'dropped') this.emit({ kind: 'resync' });
    });
    socket.addEventListener('close', () => {
      if (this.socket !== socket) return;
      this.socket = undefined;
      if (this.listeners.size === 0) return;
      this.timer = setTimeout(() => this.connect(), this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
    });
  }

  private disconnect(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const socket = this.socket;
    this.socket = undefined;
    this.connectedBefore = false;
    socket?.close(1000);
  }
}

export const liveAlarms = new LiveAlarms();
