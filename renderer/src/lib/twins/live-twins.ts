/** One change of a followed twin's data state, as the live WebSocket pushes it (docs/live.md). */
export interface LiveStateChange {
  twinId: string;
  stateId: string;
  key: string;
  value: unknown;
  timestamp: string;
  warning?: string;
}

export type LiveStatus = 'connecting' | 'live' | 'offline';

export interface LiveHandlers {
  onStates: (changes: LiveStateChange[]) => void;
  onStatus?: (status: LiveStatus) => void;
  /**
   * Re-read the current values now: the follower's twins were just subscribed (first time or after a
   * reconnect), or the server dropped messages. Live changes arriving meanwhile keep coming in order.
   */
  onResync?: () => void;
}

/** Where the socket connects and with which subprotocols (the console's cookie, or a public dashboard's key). */
export interface LiveEndpoint {
  path: string;
  protocols: string[];
}

const PROTOCOL = 'stellwerk.live.v1';
export const CONSOLE_LIVE: LiveEndpoint = { path: '/xapi/v1/live', protocols: [PROTOCOL] };

/** A public dashboard's socket: the key rides as a subprotocol, since browsers cannot set headers here. */
export const publicDashboardLive = (dashboardId: string, key: string): LiveEndpoint => ({
  path: `/hub/api/v1/public-dashboards/${encodeURIComponent(dashboardId)}/live`,
  protocols: [PROTOCOL, `dashboardkey.${key}`],
});

interface Follower {
  ids: Set<string>;
  handlers: LiveHandlers;
  /** Whether the server has answered the subscription of all its ids on the current socket. */
  confirmed: boolean;
}

/**
 * One WebSocket for everything on a page that follows twins. Followers add and remove twin ids; the
 * socket subscribes each id once (changes within one task are sent as one subscribe and one
 * unsubscribe) and closes when nobody follows anything. A follower is told to re-read its values
 * once its twins are subscribed — when it starts and after every reconnect — so a value that changed
 * before the subscription took effect is never left on screen; changes then arrive in order.
 * Reconnects with a growing pause (1 s … 30 s).
 */
export class LiveTwins {
  private followers = new Set<Follower>();
  /** Ids sent in a subscribe on the current socket, and those the server has answered. */
  private subscribed = new Set<string>();
  private answered = new Set<string>();
  private socket: WebSocket | undefined;
  private status: LiveStatus = 'connecting';
  private retryMs = 1000;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private syncQueued = false;
  /** Sockets opened so far (one, plus one per reconnect): the page shows it for diagnostics and tests. */
  opened = 0;

  constructor(private readonly endpoint: LiveEndpoint = CONSOLE_LIVE) {}

  follow(twinIds: string[], handlers: LiveHandlers): () => void {
    const follower: Follower = { ids: new Set(twinIds), handlers, confirmed: false };
    this.followers.add(follower);
    handlers.onStatus?.(this.status);
    this.queueSync();
    return () => {
      this.followers.delete(follower);
      this.queueSync();
    };
  }

  // Deferred to the end of the task: a page that swaps its followers (an effect re-running) keeps its socket.
  private queueSync(): void {
    if (this.syncQueued) return;
    this.syncQueued = true;
    queueMicrotask(() => {
      this.syncQueued = false;
      this.sync();
    });
  }

  private wanted(): Set<string> {
    return new Set([...this.followers].flatMap((f) => [...f.ids]));
  }

  private sync(): void {
    const wanted = this.wanted();
    if (wanted.size === 0) return this.close();
    if (!this.socket) return this.connect();
    if (this.socket.readyState !== WebSocket.OPEN) return; // `open` subscribes everything wanted then
    const removed = [...this.subscribed].filter((id) => !wanted.has(id));
    const added = [...wanted].filter((id) => !this.subscribed.has(id));
    if (removed.length > 0) {
      for (const id of removed) {
        this.subscribed.delete(id);
        this.answered.delete(id);
      }
      this.send({ unsubscribe: { twinIds: removed } });
    }
    if (added.length > 0) {
      for (const id of added) this.subscribed.add(id);
      this.send({ subscribe: { twinIds: added } });
    }
    this.confirmFollowers();
  }

  private send(message: unknown): void {
    this.socket?.send(JSON.stringify(message));
  }

  private setStatus(status: LiveStatus): void {
    this.status = status;
    for (const f of this.followers) f.handlers.onStatus?.(status);
  }

  /** Followers whose ids the server has all answered: live now, and re-read once. */
  private confirmFollowers(): void {
    for (const f of this.followers) {
      if (f.confirmed || ![...f.ids].every((id) => this.answered.has(id))) continue;
      f.confirmed = true;
      f.handlers.onResync?.();
    }
  }

  private connect(): void {
    this.setStatus('connecting');
    const url = new URL(this.endpoint.path, window.location.href);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    url.hash = '';
    url.search = '';
    const socket = new WebSocket(url, this.endpoint.protocols);
    this.socket = socket;
    this.opened++;
    socket.addEventListener('open', () => {
      this.retryMs = 1000;
      this.subscribed = this.wanted();
      this.answered.clear();
      for (const f of this.followers) f.confirmed = false;
      if (this.subscribed.size > 0) this.send({ subscribe: { twinIds: [...this.subscribed] } });
    });
    socket.addEventListener('message', (event) => this.receive(String(event.data)));
    socket.addEventListener('close', (event) => {
      if (this.socket !== socket) return;
      this.socket = undefined;
      if (this.followers.size === 0) return;
      this.setStatus('offline');
      // The credential was revoked (a session ended, a dashboard unpublished): a read tells the page.
      if (event.code === 4401) for (const f of this.followers) f.handlers.onResync?.();
      this.retryTimer = setTimeout(() => {
        this.retryTimer = undefined;
        this.sync();
      }, this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, 30_000);
    });
  }

  private receive(text: string): void {
    let message: { type?: string; states?: LiveStateChange[]; twinIds?: string[]; notFound?: string[] };
    try {
      message = JSON.parse(text) as typeof message;
    } catch {
      return;
    }
    if (message.type === 'subscribed') {
      for (const id of [...(message.twinIds ?? []), ...(message.notFound ?? [])]) this.answered.add(id);
      if (this.status !== 'live') this.setStatus('live');
      this.confirmFollowers();
    } else if (message.type === 'states' && message.states) {
      for (const f of this.followers) {
        const mine = message.states.filter((change) => f.ids.has(change.twinId));
        if (mine.length > 0) f.handlers.onStates(mine);
      }
    } else if (message.type === 'dropped') {
      for (const f of this.followers) f.handlers.onResync?.();
    }
  }

  private close(): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const socket = this.socket;
    this.socket = undefined;
    this.subscribed.clear();
    this.answered.clear();
    socket?.close();
  }
}

/** Follows the given twins over a socket of their own until the returned function is called. */
export function followTwins(twinIds: string[], handlers: LiveHandlers): () => void {
  if (twinIds.length === 0) return () => undefined;
  return new LiveTwins().follow(twinIds, handlers);
}
