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
  /** The server dropped messages for a slow connection, or the socket reconnected: re-read the states. */
  onResync?: () => void;
}

const PROTOCOL = 'stellwerk.live.v1';

/**
 * Follows the given twins over `/xapi/v1/live` with the session cookie; reconnects with a growing
 * pause (1 s … 30 s) until stopped. Returns the stop function.
 */
export function followTwins(twinIds: string[], handlers: LiveHandlers): () => void {
  let socket: WebSocket | undefined;
  let stopped = false;
  let retryMs = 1000;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  let connectedBefore = false;

  const connect = () => {
    handlers.onStatus?.('connecting');
    const url = new URL('/xapi/v1/live', window.location.href);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    url.hash = '';
    url.search = '';
    socket = new WebSocket(url, [PROTOCOL]);
    socket.addEventListener('open', () => {
      retryMs = 1000;
      socket?.send(JSON.stringify({ subscribe: { twinIds } }));
    });
    socket.addEventListener('message', (event) => {
      let message: { type?: string; states?: LiveStateChange[] };
      try {
        message = JSON.parse(String(event.data)) as typeof message;
      } catch {
        return;
      }
      if (message.type === 'subscribed') {
        handlers.onStatus?.('live');
        // Values may have changed while the socket was down.
        if (connectedBefore) handlers.onResync?.();
        connectedBefore = true;
      } else if (message.type === 'states' && message.states) handlers.onStates(message.states);
      else if (message.type === 'dropped') handlers.onResync?.();
    });
    socket.addEventListener('close', () => {
      if (stopped) return;
      handlers.onStatus?.('offline');
      retryTimer = setTimeout(connect, retryMs);
      retryMs = Math.min(retryMs * 2, 30_000);
    });
  };

  if (twinIds.length > 0) connect();
  return () => {
    stopped = true;
    clearTimeout(retryTimer);
    socket?.close();
  };
}
