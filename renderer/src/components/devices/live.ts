/**
 * Follows devices over the live WebSocket (docs/live.md). The console's session cookie
 * authenticates the handshake (same origin); the server refuses a cookie handshake from an origin
 * other than STELLWERK_PUBLIC_URL's, which the caller sees as `offline` and a retry.
 */
export type LiveStatus = 'connecting' | 'live' | 'offline';

export interface LivePacket {
  deviceId: string;
  receivedAt: string;
  states: Record<string, unknown>;
}

export interface LiveHandlers {
  onPackets(packets: LivePacket[]): void;
  onStatus(status: LiveStatus, problem?: string): void;
  /** The server dropped messages for this slow client: re-read the current states. */
  onDropped?(): void;
}

const PROTOCOL = 'stellwerk.live.v1';
const MAX_RETRY_MS = 15_000;

export function liveUrl(location: Location = window.location): string {
  return `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/xapi/v1/live`;
}

/** Connects, subscribes and reconnects with backoff until the returned function is called. */
export function followDevices(deviceIds: string[], handlers: LiveHandlers): () => void {
  let socket: WebSocket | undefined;
  let stopped = false;
  let retryMs = 1000;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const connect = () => {
    handlers.onStatus('connecting');
    socket = new WebSocket(liveUrl(), [PROTOCOL]);
    socket.onopen = () => socket?.send(JSON.stringify({ subscribe: { deviceIds } }));
    socket.onmessage = (event) => {
      const message = parse(event.data);
      if (!message) return;
      if (message.type === 'subscribed') {
        const missing = (message.notFound as string[] | undefined) ?? [];
        if (missing.length > 0) handlers.onStatus('offline', `notFound: ${missing.join(', ')}`);
        else {
          retryMs = 1000;
          handlers.onStatus('live');
        }
      } else if (message.type === 'packets') {
        const packets = (message.packets as LivePacket[]).filter((p) => deviceIds.includes(p.deviceId));
        if (packets.length > 0) handlers.onPackets(packets);
      } else if (message.type === 'dropped') {
        handlers.onDropped?.();
      } else if (message.type === 'error') {
        const error = message.error as { code?: string; message?: string } | undefined;
        handlers.onStatus('offline', error?.message ?? error?.code);
      }
    };
    socket.onclose = (event) => {
      if (stopped) return;
      handlers.onStatus('offline', event.code === 4401 ? 'session ended' : undefined);
      timer = setTimeout(connect, retryMs);
      retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
    };
  };

  connect();
  return () => {
    stopped = true;
    clearTimeout(timer);
    socket?.close(1000);
  };
}

function parse(data: unknown): Record<string, unknown> | undefined {
  if (typeof data !== 'string') return undefined;
  try {
    const value = JSON.parse(data) as unknown;
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
