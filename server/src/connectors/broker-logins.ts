import { safeEqual } from '../platform/crypto/tokens.js';

/** How long a broker login this node verified may be honoured while PostgreSQL cannot be asked. */
export const OFFLINE_LOGIN_TTL_MS = 24 * 60 * 60 * 1000;
const MAX_ENTRIES = 100_000;

interface VerifiedLogin<T> {
  /** SHA-256 of the password, as the connectors table stores it. */
  hash: string;
  /** What the database answered for this login (the connector, its settings and account). */
  login: T;
  verifiedAt: number;
}

/**
 * Broker logins this node verified against PostgreSQL, for when it cannot ask (the database
 * restarting or unreachable): a device reconnecting meanwhile with the same username and password
 * is let in again, and its packets are spooled as usual. Never consulted while the database answers.
 *
 * What it may get wrong, and the bounds: a connector deactivated, deleted or given new credentials
 * on THIS node is forgotten at once (ConnectorService's deactivation); one changed on another node
 * of a cluster, or in the database directly, is only noticed when the database answers again, so
 * such a login is honoured for at most OFFLINE_LOGIN_TTL_MS after this node last verified it, and
 * only during an outage. Holds password hashes only, at most MAX_ENTRIES (oldest first out).
 */
export class BrokerLogins<T extends { id: string } = { id: string }> {
  private readonly logins = new Map<string, VerifiedLogin<T>>();

  constructor(
    private readonly ttlMs = OFFLINE_LOGIN_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** The database accepted this login. */
  verified(username: string, hash: string, login: T): void {
    // Re-inserted, so the map's order stays oldest verification first.
    this.logins.delete(username);
    this.logins.set(username, { hash, login, verifiedAt: this.now() });
    if (this.logins.size > MAX_ENTRIES) this.logins.delete(this.logins.keys().next().value!);
  }

  /** The database refused this username (unknown, inactive, other password). */
  refused(username: string): void {
    this.logins.delete(username);
  }

  /** Deactivated, deleted or given new credentials. */
  forgetConnector(connectorId: string): void {
    for (const [username, verified] of this.logins)
      if (verified.login.id === connectorId) this.logins.delete(username);
  }

  /** The login verified within the TTL with this very password, else null. */
  whileOffline(username: string, hash: string): T | null {
    const verified = this.logins.get(username);
    if (!verified || this.now() - verified.verifiedAt > this.ttlMs) return null;
    return safeEqual(hash, verified.hash) ? verified.login : null;
  }
}
