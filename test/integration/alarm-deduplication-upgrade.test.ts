import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Account } from '../../server/src/accounts/account.entity.js';
import { ENTITIES } from '../../server/src/entities.js';
import { openOrm } from '../../server/src/platform/db/orm.js';
import { createTestDatabase } from './support/database.js';

/**
 * Upgrading a database that already holds several open entries of one condition: the migration
 * that makes deduplication a unique index merges them first (the newest keeps the group's count,
 * the others are closed as `merged`), and leaves closed entries and other conditions alone.
 */
const BEFORE = 'Migration20261126053000_device_eui_lookup';
let db: Awaited<ReturnType<typeof createTestDatabase>>;
let orm: Awaited<ReturnType<typeof openOrm>>;

beforeAll(async () => {
  db = await createTestDatabase();
  orm = await openOrm({ clientUrl: db.url, entities: ENTITIES, poolMax: 2 });
}, 60_000);
afterAll(async () => {
  await orm?.close();
  await db?.drop();
});

describe('alarm deduplication upgrade', () => {
  it('merges open duplicates of one source and reference into the newest entry', async () => {
    await orm.getMigrator().down({ to: BEFORE });
    const sql = (q: string, p: unknown[] = []) =>
      orm.em.fork().getConnection().execute<Array<Record<string, unknown>>>(q, p);
    const em = orm.em.fork();
    const account = new Account();
    account.path = [account.id];
    account.title = 'Upgraded';
    await em.persistAndFlush(account);
    const accountId = account.id;
    const rule = randomUUID();
    const twin = randomUUID();
    const insert = (status: string, minutesAgo: number, source = rule) =>
      sql(
        `INSERT INTO alarm_logs (id, account_id, category, message, reference_type, reference_id, source_kind, source_id,
           status, details, created_at, updated_at)
         VALUES (?, ?, 'Rule', ?, 'digitalTwin', ?, 'rule', ?, ?, '{}', now() - make_interval(mins => ?), now())
         RETURNING id`,
        [randomUUID(), accountId, `${status} ${minutesAgo}`, twin, source, status, minutesAgo],
      ).then((rows) => String(rows[0]!.id));
    const oldest = await insert('open', 30);
    const acked = await insert('acknowledged', 20);
    const newest = await insert('open', 10);
    const closed = await insert('closed', 40);
    const other = await insert('open', 5, randomUUID());
    await orm.getMigrator().up();

    const rows = await sql(
      'SELECT id, status, occurrence_count, close_reason, last_seen_at = created_at AS same FROM alarm_logs WHERE id IN (?)',
      [[oldest, acked, newest, closed, other]],
    );
    const byId = new Map(rows.map((r) => [String(r.id), r]));
    expect(byId.get(newest)).toMatchObject({
      status: 'open',
      occurrence_count: 3,
      close_reason: null,
      same: true,
    });
    expect(byId.get(oldest)).toMatchObject({ status: 'closed', close_reason: 'merged' });
    expect(byId.get(acked)).toMatchObject({ status: 'closed', close_reason: 'merged' });
    expect(byId.get(closed)).toMatchObject({ status: 'closed', close_reason: 'manual', occurrence_count: 1 });
    expect(byId.get(other)).toMatchObject({ status: 'open', occurrence_count: 1 });
  });
});
