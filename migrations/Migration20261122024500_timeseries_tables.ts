import { Migration } from '@mikro-orm/migrations';

/**
 * Time-series storage, hand-written (tables `ts_*` are outside the entity schema diff):
 * - `ts_points`: the PostgreSQL target, range-partitioned by month on `time`; partitions are created
 *   ahead by the time-series maintenance, the default partition catches anything outside them.
 * - `ts_outbox`: the durable spool every target reads after its own cursor in `ts_target_cursors`.
 */
export class Migration20261122024500_timeseries_tables extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "ts_points" ("state_id" uuid not null, "time" timestamptz not null, "value" double precision null, "text" text null) partition by range ("time");`);
    this.addSql(`create table "ts_points_default" partition of "ts_points" default;`);
    this.addSql(`create index "ts_points_state_id_time_index" on "ts_points" ("state_id", "time");`);
    this.addSql(`create table "ts_outbox" ("id" bigserial primary key, "created_at" timestamptz not null default now(), "count" integer not null, "points" bytea not null);`);
    this.addSql(`create table "ts_target_cursors" ("target" varchar(100) primary key, "outbox_id" bigint not null default 0, "updated_at" timestamptz not null default now());`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "ts_target_cursors";`);
    this.addSql(`drop table if exists "ts_outbox";`);
    this.addSql(`drop table if exists "ts_points" cascade;`);
  }
}
