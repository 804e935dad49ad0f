import { Migration } from '@mikro-orm/migrations';

/**
 * The postgres time-series target no longer reads the outbox: the state engine writes its points in
 * the transaction that changes the states (docs/adr/0111). The points its cursor had not passed yet
 * move into `ts_points` here, once, before any node of the new version writes (a start-up step
 * would run after the ingest worker had replayed its spool into new outbox rows, and copy those
 * twice). The postgres entry of STELLWERK_TIMESERIES_TARGETS is always named `postgres`. Outbox
 * rows: a JSON array of `[stateId, twinId, accountId, stateKey, timeMs, value, text]` (outbox.ts).
 */
export class Migration20261126100000_postgres_points_from_outbox extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      insert into "ts_points" ("state_id", "time", "value", "text")
      select (e->>0)::uuid, to_timestamp((e->>4)::float8 / 1000), (e->>5)::float8, e->>6
        from "ts_outbox" o
       cross join lateral jsonb_array_elements(convert_from(o."points", 'UTF8')::jsonb) as e
       where o."id" > (select "outbox_id" from "ts_target_cursors" where "target" = 'postgres');`);
    this.addSql(`delete from "ts_target_cursors" where "target" = 'postgres';`);
  }

  /** An older version finds its postgres target caught up with the outbox as it is now. */
  override async down(): Promise<void> {
    this.addSql(`
      insert into "ts_target_cursors" ("target", "outbox_id", "updated_at")
      select 'postgres', coalesce(max("id"), 0), now() from "ts_outbox"
      on conflict ("target") do nothing;`);
  }
}
