import { Migration } from '@mikro-orm/migrations';

/**
 * Hourly rollups of `ts_points` per state and UTC hour, folded off the write path by a background
 * job (timeseries/rollup-fold.ts, docs/adr/0122-timeseries-rollups.md):
 * - `ts_rollup_hourly`: the folded hours;
 * - `ts_rollup_fold`: one row, `folded_before`: every hour before it is folded, unless marked;
 * - `ts_rollup_dirty`: (state, hour) pairs that got a point after they may have been folded; the
 *   write path marks them in the inserting transaction, the job re-folds and clears them.
 * Readers use a rollup hour only below `folded_before` and not marked, in the same snapshot.
 *
 * Drops what an earlier build created (a statement trigger folding inside every insert) if present.
 * The watermark starts at the oldest point's hour, so the job folds the history in its first runs;
 * with no points, two hours back, below which any point written later counts as late and is marked.
 */
export class Migration20261128170000_ts_rollup_fold extends Migration {
  override async up(): Promise<void> {
    this.addSql(`drop trigger if exists "ts_points_rollup_hourly" on "ts_points";`);
    this.addSql(`drop function if exists "ts_rollup_hourly_fold"();`);
    this.addSql(`drop table if exists "ts_rollup_hourly";`);
    this.addSql(`
      create table "ts_rollup_hourly" (
        "state_id" uuid not null,
        "hour" timestamptz not null,
        "n_rows" bigint not null,
        "n_values" bigint not null,
        "v_sum" double precision null,
        "v_min" double precision null,
        "v_max" double precision null,
        "first_time" timestamptz null,
        "first_value" double precision null,
        "last_time" timestamptz null,
        "last_value" double precision null,
        constraint "ts_rollup_hourly_pkey" primary key ("state_id", "hour"));`);
    // Folds, retention and partition maintenance work by hour over all states; rows arrive in hour order.
    this.addSql(`create index "ts_rollup_hourly_hour_brin" on "ts_rollup_hourly" using brin ("hour");`);
    this.addSql(`
      create table "ts_rollup_dirty" (
        "state_id" uuid not null,
        "hour" timestamptz not null,
        "marked_at" timestamptz not null default now(),
        constraint "ts_rollup_dirty_pkey" primary key ("state_id", "hour"));`);
    this.addSql(`
      create table "ts_rollup_fold" (
        "id" boolean not null default true,
        "folded_before" timestamptz not null,
        constraint "ts_rollup_fold_pkey" primary key ("id"),
        constraint "ts_rollup_fold_one_row" check ("id"));`);
    this.addSql(`
      insert into "ts_rollup_fold" ("folded_before")
      select date_trunc('hour', least((select min("time") from "ts_points"), now() - interval '2 hours'), 'UTC');`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "ts_rollup_fold";`);
    this.addSql(`drop table if exists "ts_rollup_dirty";`);
    this.addSql(`drop table if exists "ts_rollup_hourly";`);
  }
}
