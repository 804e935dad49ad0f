import WebSocket from 'ws';
import type { DialOut, DialTarget } from './dial-out.js';

/**
 * WebSocket clients for tenant-set `ws://` and `wss://` URLs. `ws` opens its own socket unless it
 * is given `createConnection`, so the connection comes from DialOut (the target guard judges the
 * host, TLS included). Redirects are not followed: a redirect would be a new target the guard has
 * not judged, and the upgrade fails with the 3xx status instead.
 */

export interface GuardedWebSocketOptions {
  headers?: Record<string, string>;
  /** PEM of the CA that signed the server certificate (wss). */
  ca?: string;
  cert?: string;
  key?: string;
  /** false accepts self-signed or otherwise unverifiable server certificates. */
  rejectUnauthorized?: boolean;
  handshakeTimeoutMs?: number;
  maxPayloadBytes?: number;
}

export function guardedWebSocket(dial: DialOut, url: string, options: GuardedWebSocketOptions): WebSocket {
  const target = new URL(url);
  const secure = target.protocol === 'wss:';
  if (!secure && target.protocol !== 'ws:') throw new Error(`${target.protocol}// is not a WebSocket URL`);
  const connect: DialTarget = {
    host: target.hostname,
    port: Number(target.port) || (secure ? 443 : 80),
    ...(secure
      ? {
          tls: {
            ...(options.ca ? { ca: options.ca } : {}),
            ...(options.cert ? { cert: options.cert } : {}),
            ...(options.key ? { key: options.key } : {}),
            rejectUnauthorized: options.rejectUnauthorized !== false,
          },
        }
      : {}),
  };
  return new WebSocket(target, {
    createConnection: () => dial.socket(connect),
    followRedirects: false,
    perMessageDeflate: false,
    ...(options.headers ? { headers: options.headers } : {}),
    ...(options.handshakeTimeoutMs ? { handshakeTimeout: options.handshakeTimeoutMs } : {}),
    ...(options.maxPayloadBytes ? { maxPayload: options.maxPayloadBytes } : {}),
  });
}
