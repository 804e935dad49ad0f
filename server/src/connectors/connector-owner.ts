import { createHash } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import pg from 'pg';
import type { Lifecycle } from '../platform/lifecycle.js';

/**
 * Cluster mode: a dial-out connector runtime (an mqtt-in client without a shared subscription, a
 * field-protocol link, a poller) runs on exactly one node. Two nodes dialling the same broker with
 * one client id would take the session from each other; two pollers would store every reading
 * twice. The node that runs a connector holds a PostgreSQL advisory lock for it (one connection per
 * node holds all of them); the others retry every few seconds, so the connector moves to a
 * survivor within that time when its node dies (the database ends a dead node's session and with it
 * the locks). ADR 0132 lists which kind runs where.
 */

/** Advisory-lock namespace of connector ownership ("CONO"); the second key is the connector's hash. */
export const OWNER_LOCK_CLASS = 0x434f_4e4f;
const RETRY_MS = 3000;

export function ownerKey(connectorId: string): number {
  return createHash('sha1').update(connectorId).digest().readUInt32BE(0) & 0x7fff_ffff;
}

interface Claim {
  /** Starts the runtime again (it claims again first). */
  retry: () => Promise<void>;
  /** Stops the runtime here without releasing (the lock is gone already). */
  stop: () => Promise<void>;
  held: boolean;
}

export class ConnectorOwner implements Lifecycle {
  readonly name = 'connector-owner';
  private client: pg.Client | undefined;
  private readonly claims = new Map<string, Claim>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly databaseUrl: string,
    private readonly log: FastifyBaseLogger,
  ) {}

  /**
   * True when this node may run the connector now (it holds the lock); otherwise `retry` runs every
   * few seconds until this node gets it or `release` is called.
   */
  async claim(connectorId: string, retry: () => Promise<void>, stop: () => Promise<void>): Promise<boolean> {
    if (this.stopped) return false;
    const claim: Claim = { retry, stop, held: false };
    this.claims.set(connectorId, claim);
    try {
      const db = await this.connection();
      const { rows } = await db.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS ok', [
        OWNER_LOCK_CLASS,
        ownerKey(connectorId),
      ]);
      claim.held = rows[0]?.ok === true;
    } catch (error) {
      this.log.warn({ err: error, connectorId }, 'Connector ownership not checked');
    }
    if (!claim.held) this.schedule();
    return claim.held;
  }

  /** The runtime stopped here: give the connector up. */
  async release(connectorId: string): Promise<void> {
    const claim = this.claims.get(connectorId);
    if (!claim) return;
    this.claims.delete(connectorId);
    if (claim.held)
      await this.client
        ?.query('SELECT pg_advisory_unlock($1, $2)', [OWNER_LOCK_CLASS, ownerKey(connectorId)])
        .catch(() => undefined);
  }

  async start(): Promise<void> {
    this.stopped = false;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.claims.clear();
    await this.client?.end().catch(() => undefined);
    this.client = undefined;
  }

  private schedule(): void {
    if (this.timer || this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      for (const [id, claim] of this.claims) {
        if (claim.held) continue;
        claim
          .retry()
          .catch((error: unknown) => this.log.warn({ err: error, connectorId: id }, 'Connector not started'));
      }
    }, RETRY_MS);
  }

  private async connection(): Promise<pg.Client> {
    if (this.client) return this.client;
    const client = new pg.Client({ connectionString: this.databaseUrl });
    client.on('error', (error) => {
      // The locks went with the session: stop what runs here before another node starts it.
      this.log.warn({ err: error }, 'Connector ownership locks lost');
      if (this.client === client) this.client = undefined;
      void client.end().catch(() => undefined);
      for (const [id, claim] of this.claims) {
        if (!claim.held) continue;
        claim.held = false;
        // Stopping releases the claim; keep it so the retries start the connector again.
        void claim.stop().finally(() => {
          if (!this.stopped) this.claims.set(id, claim);
          this.schedule();
        });
      }
    });
    await client.connect();
    this.client = client;
    return client;
  }
}
