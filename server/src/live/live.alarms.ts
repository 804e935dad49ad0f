import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import { hasPermission } from '../auth/principal.js';
import { errors, type AppError } from '../platform/errors.js';
import type { AlarmEntry } from '../integration/ports.js';
import { visibleAlarms } from './live.access.js';
import type { LiveConnection } from './live.connection.js';
import type { LiveGrant } from './live.grant.js';
import { alarmEntry } from './live.protocol.js';

/** What following alarms needs (besides seeing each entry). */
export const LIVE_ALARMS_PERMISSION = 'alarmLog.read';

/**
 * Why `grant` may not follow alarms, or null: alarms are for signed-in users with the permission; a
 * public dashboard's viewer follows none.
 */
export function alarmsRefusal(grant: LiveGrant): AppError | null {
  return grant.principal && hasPermission(grant.principal, LIVE_ALARMS_PERMISSION)
    ? null
    : errors.noPermission(LIVE_ALARMS_PERMISSION);
}

/**
 * The connections following alarms (`{"subscribe":{"alarms":true}}`, docs/live.md) and the push of
 * committed alarm changes to them. Each entry goes only to connections that could read it over the
 * API (tenancy and permission scopes, re-read with the hub's principal re-checks). Changes are
 * pushed one batch after the other, so a console sees an entry's changes in the order they were
 * made; at most `maxPending` batches wait, more are dropped and counted like slow-client drops.
 */
export class LiveAlarmFollowers {
  private readonly followers = new Set<LiveConnection>();
  private chain: Promise<void> = Promise.resolve();
  private pending = 0;

  constructor(
    private readonly em: () => EntityManager,
    private readonly log: FastifyBaseLogger,
    private readonly maxPending: number,
    private readonly counted: { sent(n: number): void; dropped(n: number): void },
  ) {}

  follow(c: LiveConnection): void {
    this.followers.add(c);
  }

  unfollow(c: LiveConnection): boolean {
    return this.followers.delete(c);
  }

  /** Unfollows `c` when its re-read grant may no longer follow alarms; true if it did. */
  recheck(c: LiveConnection): boolean {
    return this.followers.has(c) && alarmsRefusal(c.grant) !== null && this.unfollow(c);
  }

  /** Queues the push of `entries`; resolves when it (and every earlier one) is done. */
  publish(entries: AlarmEntry[]): Promise<void> {
    if (this.followers.size === 0 || entries.length === 0) return this.chain;
    if (this.pending >= this.maxPending) {
      this.counted.dropped(entries.length);
      return this.chain;
    }
    this.pending++;
    this.chain = this.chain
      .then(() => this.push(entries))
      .catch((error: unknown) => this.log.warn({ err: error }, 'live push: alarm push failed'))
      .finally(() => this.pending--);
    return this.chain;
  }

  private async push(entries: AlarmEntry[]): Promise<void> {
    const encoded = new Map(entries.map((e) => [e.id, alarmEntry(e)]));
    let sent = 0;
    // Connections of one account and the same scopes see the same entries: one query for all of them.
    const byAudience = new Map<string, Promise<Set<string>>>();
    for (const c of [...this.followers]) {
      const principal = c.grant.principal;
      if (!principal) continue;
      const { accountId, permissionScopeIds } = principal;
      const audience = `${accountId}|${permissionScopeIds ? [...permissionScopeIds].sort().join(',') : '*'}`;
      let visible: Set<string>;
      try {
        let query = byAudience.get(audience);
        if (!query) byAudience.set(audience, (query = visibleAlarms(this.em, principal, entries)));
        visible = await query;
      } catch (error) {
        this.log.warn({ err: error }, 'live push: alarm visibility check failed');
        continue;
      }
      const mine = entries.filter((e) => visible.has(e.id)).map((e) => encoded.get(e.id)!);
      if (mine.length === 0 || !this.followers.has(c)) continue;
      c.send(`{"type":"alarms","alarms":[${mine.join(',')}]}`);
      sent += mine.length;
    }
    if (sent > 0) this.counted.sent(sent);
  }
}
