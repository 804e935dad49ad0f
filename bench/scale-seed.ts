import type pg from 'pg';
import { refoldFrom } from '../server/src/timeseries/rollups.js';

/**
 * The data of `npm run bench:scale`, written straight into the tables (as bench:ingest does): the
 * devices, twins and a year of points an import and a year of ingest would leave behind, in seconds
 * instead of hours. Identifiers follow what real fleets carry: a device id, an EUI, an external
 * (billing) id, titles with numbers in them.
 */

/**
 * `count` devices of one account and connector, numbered from 1, with varied last-seen times and
 * health, and a next health check spread over the coming day as the server places an imported
 * device's: without one, the server's health scheduler would place 2,000 devices a round in the
 * background for minutes, under the first requests measured.
 */
export async function seedDevices(
  db: pg.Client,
  accountId: string,
  connectorId: string,
  count: number,
): Promise<void> {
  // In slices of 100k rows: one statement of a million rows holds a lot of memory for nothing.
  const slice = 100_000;
  for (let from = 1; from <= count; from += slice) {
    const to = Math.min(count, from + slice - 1);
    await db.query(
      `INSERT INTO virtual_devices (id, account_id, connector_id, device_id, title, description, tags, groups,
          key_value_data, activation_method, skip_frame_counter_check, health_state, dev_eui, external_id,
          last_seen, health_next_check_at, created_at, updated_at)
       SELECT gen_random_uuid(), $1, $2, 'meter-' || lpad(n::text, 7, '0'), 'Water meter ' || n || ', zone ' || (n % 97),
              '', ARRAY['zone-' || (n % 97)], '{}', jsonb_build_object('zone', n % 97), 'OTAA', false,
              (ARRAY['Healthy','Warning','Critical','Unknown'])[1 + n % 4],
              lpad(to_hex(n::bigint * 7919), 16, '0'), 'EXT-' || lpad((n::bigint * 31)::text, 9, '0'),
              now() - make_interval(secs => (n::bigint * 7919) % 864000),
              now() + make_interval(secs => (n::bigint * 7919) % 86400), now() - make_interval(secs => n),
              now() - make_interval(secs => (n::bigint * 13) % 86400)
         FROM generate_series($3::int, $4::int) AS n`,
      [accountId, connectorId, from, to],
    );
  }
}

/** `count` twins of one account, numbered from 1. */
export async function seedTwins(db: pg.Client, accountId: string, count: number): Promise<void> {
  const slice = 100_000;
  for (let from = 1; from <= count; from += slice) {
    const to = Math.min(count, from + slice - 1);
    await db.query(
      `INSERT INTO digital_twins (id, account_id, path, title, reference_id, custom_properties, tags, created_at, updated_at)
       SELECT gen_random_uuid(), $1, '{}', 'Building ' || n, 'ref-' || n, '{}', ARRAY['zone-' || (n % 97)],
              now() - make_interval(secs => n), now() - make_interval(secs => (n::bigint * 13) % 86400)
         FROM generate_series($2::int, $3::int) AS n`,
      [accountId, from, to],
    );
  }
}

/**
 * One numeric state on the account's first twin with one point a minute over the year before `end`.
 * Written past the write path, so the rollup fold is sent back to the year's start to fold it.
 */
export async function seedYearOfPoints(db: pg.Client, accountId: string, end: Date): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO data_states (id, account_id, twin_id, key, title, unit, source, meta, engine, created_at, updated_at)
     SELECT gen_random_uuid(), $1, (SELECT id FROM digital_twins WHERE account_id = $1 ORDER BY created_at DESC LIMIT 1),
            'flow', 'Flow', 'm³/h', NULL, '{}', '{}', now(), now()
     RETURNING id`,
    [accountId],
  );
  const stateId = rows[0]!.id;
  const day = 86_400_000;
  // A month at a time, in time order, as ingest writes them.
  for (let month = 12; month > 0; month--) {
    const from = new Date(end.getTime() - Math.ceil((month * 365) / 12) * day);
    const to = new Date(end.getTime() - Math.ceil(((month - 1) * 365) / 12) * day);
    await db.query(
      `INSERT INTO ts_points (state_id, "time", value, text)
       SELECT $1, t, 50 + 30 * sin(extract(epoch FROM t) / 3600.0) + random() * 5, NULL
         FROM generate_series($2::timestamptz, $3::timestamptz - interval '1 minute', interval '1 minute') AS t`,
      [stateId, from, to],
    );
  }
  await refoldFrom(db, new Date(end.getTime() - 365 * day));
  return stateId;
}
