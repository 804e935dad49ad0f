import type WebSocket from 'ws';
import type { RawData } from 'ws';
import { guardedWebSocket } from '../../../outgoing/dial/websocket-client.js';
import type { Connector } from '../../connector.entity.js';
import { LinkError, type LinkContext, type LinkDriver, type LinkSession } from '../../links/link.types.js';
import { parsePointer } from './json-pointer.js';
import { readMessage, WebSocketMessageError, type MessageMatching } from './websocket-message.js';
import type { Frame } from './websocket-downlink.js';

/** Settings of a websocket connector as stored (secrets sealed as `{ sealed }`). */
export interface WebSocketConfig {
  url: string;
  headers?: Record<string, string>;
  bearerToken?: { sealed: string };
  serverCa?: string;
  clientCert?: string;
  clientKey?: { sealed: string };
  rejectUnauthorized?: boolean;
  subscribeMessage?: string;
  messages?: 'json' | 'any';
  deviceIdPointer?: string;
  deviceId?: string;
  pingIntervalSeconds?: number;
  downlinkFormat?: 'json' | 'binary';
}

export const DEFAULT_PING_INTERVAL_S = 30;
const HANDSHAKE_TIMEOUT_MS = 10_000;
/** Larger messages end the connection (ws closes with 1009): a packet holds at most 256 KiB. */
const MAX_MESSAGE_BYTES = 256 * 1024;
/** Messages waiting for the packet store; beyond it the socket is paused, so memory stays bounded. */
const PAUSE_AT = 64;
const RESUME_AT = 16;
/** A dropped message of one kind is logged at most once a minute. */
const LOG_EVERY_MS = 60_000;

/** Where the connector connects, for log lines: no user info, no query (either may hold a token). */
export function websocketTarget(connector: Connector): string {
  const url = String((connector.config as unknown as WebSocketConfig).url ?? '');
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return 'the WebSocket server';
  }
}

export function matchingOf(config: WebSocketConfig): MessageMatching {
  const pointer = config.deviceIdPointer ? parsePointer(config.deviceIdPointer) : undefined;
  return {
    messages: config.messages ?? 'json',
    ...(pointer ? { pointer, pointerText: config.deviceIdPointer } : {}),
    ...(config.deviceId ? { deviceId: config.deviceId } : {}),
  };
}

/** An open WebSocket: what downlinks send with (websocket-downlink.ts). */
export class WebSocketSession implements LinkSession {
  readonly closed: Promise<string>;
  private reason: string | undefined;

  constructor(private readonly socket: WebSocket) {
    this.closed = new Promise((resolve) =>
      socket.once('close', (code: number, why: Buffer) => {
        const said = why.toString('utf8').slice(0, 100);
        resolve(this.reason ?? `the server closed the connection (code ${code}${said ? `: ${said}` : ''})`);
      }),
    );
  }

  /** Ends the connection at once, saying why (a dead peer, a protocol error). */
  drop(reason: string): void {
    this.reason ??= reason;
    this.socket.terminate();
  }

  send(frame: Frame): Promise<void> {
    return new Promise((resolve, reject) =>
      this.socket.send(frame.data, { binary: frame.binary }, (error) => (error ? reject(error) : resolve())),
    );
  }

  async close(): Promise<void> {
    this.reason ??= 'stopped';
    this.socket.terminate();
    await this.closed;
  }
}

/**
 * Connects as a WebSocket client through the outgoing-target guard; sends the subscribe message
 * once open; pings every `pingIntervalSeconds` and drops the connection when the previous ping got
 * no pong (the peer's pings are answered by `ws` itself); turns messages into packets in order.
 */
export const websocketDriver: LinkDriver<WebSocketSession> = {
  target: websocketTarget,
  open(ctx) {
    const config = ctx.connector.config as unknown as WebSocketConfig;
    const headers: Record<string, string> = { ...config.headers };
    const token = ctx.secret('bearerToken');
    if (token) headers.authorization = `Bearer ${token}`;
    const key = ctx.secret('clientKey');
    const socket = guardedWebSocket(ctx.dial, config.url, {
      headers,
      ...(config.serverCa ? { ca: config.serverCa } : {}),
      ...(config.clientCert && key ? { cert: config.clientCert, key } : {}),
      ...(config.rejectUnauthorized === false ? { rejectUnauthorized: false } : {}),
      handshakeTimeoutMs: HANDSHAKE_TIMEOUT_MS,
      maxPayloadBytes: MAX_MESSAGE_BYTES,
    });
    // As mqtt.connect does: an error after the ones handled below must not end the process.
    socket.on('error', () => undefined);
    return new Promise<WebSocketSession>((resolve, reject) => {
      const abort = () => socket.terminate();
      ctx.signal.addEventListener('abort', abort, { once: true });
      const fail = (error: Error) => {
        ctx.signal.removeEventListener('abort', abort);
        socket.terminate();
        reject(error);
      };
      socket.once('unexpected-response', (request, response) => {
        request.destroy();
        fail(new LinkError(`The server refused the WebSocket upgrade with HTTP ${response.statusCode}`));
      });
      socket.once('error', fail);
      socket.once('open', () => {
        socket.off('error', fail);
        const session = new WebSocketSession(socket);
        void session.closed.then(() => ctx.signal.removeEventListener('abort', abort));
        socket.on('error', (error) => session.drop(`protocol error: ${error.message}`));
        keepAlive(socket, session, ctx, (config.pingIntervalSeconds ?? DEFAULT_PING_INTERVAL_S) * 1000);
        receive(socket, ctx, matchingOf(config));
        if (config.subscribeMessage) socket.send(config.subscribeMessage);
        resolve(session);
      });
    });
  },
};

function keepAlive(socket: WebSocket, session: WebSocketSession, ctx: LinkContext, everyMs: number): void {
  let answered = true;
  socket.on('pong', () => (answered = true));
  const timer = setInterval(() => {
    if (!answered) return session.drop(`no pong within ${everyMs / 1000} s`);
    answered = false;
    socket.ping();
  }, everyMs);
  void session.closed.then(() => clearInterval(timer));
  ctx.signal.addEventListener('abort', () => clearInterval(timer), { once: true });
}

/** Messages into packets, one at a time in arrival order; a slow store pauses the socket. */
function receive(socket: WebSocket, ctx: LinkContext, matching: MessageMatching): void {
  let chain = Promise.resolve();
  let waiting = 0;
  const logged = new Map<string, number>();
  const warn = (message: string, details?: Record<string, unknown>) => {
    const now = Date.now();
    if (now - (logged.get(message) ?? -Infinity) < LOG_EVERY_MS) return;
    logged.set(message, now);
    ctx.log('warn', message, details);
  };
  socket.on('message', (data: RawData, binary: boolean) => {
    const bytes = Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer);
    waiting += 1;
    if (waiting >= PAUSE_AT) socket.pause();
    chain = chain
      .then(async () => {
        for (const item of readMessage(bytes, binary, matching)) await ctx.packet(item);
      })
      .catch((error: unknown) => {
        if (error instanceof WebSocketMessageError) warn(`Message dropped: ${error.message}`);
        else warn('Message not stored: the packet store cannot take it now');
      })
      .finally(() => {
        waiting -= 1;
        if (waiting <= RESUME_AT && socket.isPaused) socket.resume();
      });
  });
}
