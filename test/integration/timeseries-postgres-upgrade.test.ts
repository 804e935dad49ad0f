import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Account } from '../../server/src/accounts/account.entity.js';
import { ENTITIES } from '../../server/src/entities.js';
import { openOrm } from '../../server/src/platform/db/orm.js';
import { OutboxSink } from '../../server/src/timeseries/outbox.js';
import { createTestDatabase } from './support/database.js';
import { insertTwinWithStates, pointsOf } from './support/timeseries-world.js';

/**
 * Upgrading a database whose postgres target was fed from the outbox: the migration moves the points
 * its cursor had not passed into `ts_points`, once, and drops the cursor; external targets' cursors
 * and the outbox stay as they are.
 */
const BEFORE = 'Migration20261126080200_alarm_severity_dedup';
let db: Awaited<ReturnType<typeof createTestDatabase>>;
let orm: Awaited<ReturnType<typeof openOrm>>;
let client: pg.Client;

beforeAll(async () => {
  db = await createTestDatabase();
  orm = await openOrm({ clientUrl: db.url, entities: ENTITIES, poolMax: 2 });
  client = new pg.Client({ connectionString: db.url });
  await client.connect();
}, 60_000);
afterAll(async () => {
  await client?.end();
  await orm?.close();
  await db?.drop();
});

describe('time-series upgrade', () => {
  it("moves the points the postgres target's outbox cursor had not passed into ts_points once", async () => {
    await orm.getMigrator().down({ to: BEFORE });
    // Going down left the postgres target caught up with the (empty) outbox, as an older version expects.
    expect(
      (await client.query(`SELECT outbox_id FROM ts_target_cursors WHERE target = 'postgres'`)).rows,
    ).toHaveLength(1);
    const query = (text: string, params: unknown[] = []) =>
      client.query<Record<string, unknown>>(text, params);
    const em = orm.em.fork();
    const account = new Account();
    account.path = [account.id];
    account.title = 'Upgraded';
    await em.persistAndFlush(account);
    const world = await insertTwinWithStates(client, account.id, ['level', 'mode']);
    const sink = new OutboxSink();
    // Before: the postgres target got the first batch, Influx nothing; two batches wait.
    await sink.append(client, pointsOf(world, 0, new Date('2026-11-20T00:00:00Z'), 4));
    const delivered = (await query('SELECT max(id) AS id FROM ts_outbox')).rows[0]!.id;
    await query(
      `INSERT INTO ts_target_cursors (target, outbox_id) VALUES ('postgres', $1), ('influxdb-v1', 0)
       ON CONFLICT (target) DO UPDATE SET outbox_id = EXCLUDED.outbox_id`,
      [delivered],
    );
    await sink.append(client, pointsOf(world, 0, new Date('2026-11-21T00:00:00Z'), 3));
    await sink.append(
      client,
      pointsOf(world, 1, new Date('2026-11-22T00:00:00Z'), 2, (i) => ({ value: null, text: `on "${i}"` })),
    );

    await orm.getMigrator().up();

    const points = (
      await query(
        `SELECT to_json("time") #>> '{}' AS time, value, text FROM ts_points WHERE state_id = ANY($1::uuid[]) ORDER BY "time"`,
        [world.states.map((s) => s.id)],
      )
    ).rows;
    expect(points.map((p) => [new Date(String(p.time)).toISOString(), p.value, p.text])).toEqual([
      ['2026-11-21T00:00:00.000Z', 0.5, null],
      ['2026-11-21T00:00:01.000Z', 1.5, null],
      ['2026-11-21T00:00:02.000Z', 2.5, null],
      ['2026-11-22T00:00:00.000Z', null, 'on "0"'],
      ['2026-11-22T00:00:01.000Z', null, 'on "1"'],
    ]);
    const cursors = (await query('SELECT target FROM ts_target_cursors ORDER BY target')).rows;
    expect(cursors.map((c) => c.target)).toEqual(['influxdb-v1']);
    expect((await query('SELECT count(*)::int AS n FROM ts_outbox')).rows[0]!.n).toBe(3);
  });
});
