import type { Duplex } from 'node:stream';
import { StartupError } from '../platform/db/startup-error.js';
import type { OpenFileLimit } from '../platform/open-files.js';

/**
 * The broker's cap on sockets, so MQTT clients can never take the descriptors PostgreSQL connections,
 * HTTP, the packet spool and logs need: the open-file limit minus a reserve
 * (STELLWERK_MQTT_RESERVED_FILES; default 1,024, or half the limit when that is lower), and at most
 * STELLWERK_MQTT_MAX_CONNECTIONS when set. Counted are all broker sockets from the moment they are
 * accepted: TCP, TLS (before its handshake) and WebSocket, with or without a CONNECT yet. Computed once
 * at start.
 */
export interface BrokerConnectionCap {
  /** Broker sockets allowed at once; null: no cap (no open-file limit to derive one from, none configured). */
  max: number | null;
  openFiles: OpenFileLimit | null;
  /** Descriptors kept for everything but broker connections. */
  reserved: number;
}

export const DEFAULT_RESERVED_FILES = 1024;

export function brokerConnectionCap(
  openFiles: OpenFileLimit | null,
  settings: { maxConnections: number | undefined; reservedFiles: number | undefined },
): BrokerConnectionCap {
  const limit = openFiles?.soft ?? null;
  const reserved =
    settings.reservedFiles ??
    (limit === null ? DEFAULT_RESERVED_FILES : Math.min(DEFAULT_RESERVED_FILES, Math.floor(limit / 2)));
  if (limit !== null && reserved >= limit) {
    throw new StartupError(
      `STELLWERK_MQTT_RESERVED_FILES ${reserved} leaves no room for MQTT connections under the open-file limit of ${limit}; lower it or raise the limit (LimitNOFILE= in the systemd unit, ulimit -Hn)`,
    );
  }
  const derived = limit === null ? null : limit - reserved;
  const max =
    settings.maxConnections === undefined
      ? derived
      : Math.min(settings.maxConnections, derived ?? Number.POSITIVE_INFINITY);
  return { max, openFiles, reserved };
}

/** Counts open broker sockets against the cap. */
export class SocketBudget {
  private count = 0;

  constructor(readonly max: number | null) {}

  get open(): number {
    return this.count;
  }

  /** Counts `socket` until it closes; false when the cap is reached (the caller destroys it). */
  admit(socket: Duplex): boolean {
    if (this.max !== null && this.count >= this.max) return false;
    this.count++;
    socket.once('close', () => this.count--);
    return true;
  }
}
