import { Migration } from '@mikro-orm/migrations';

/**
 * Hourly rollups of `ts_points` per state and UTC hour (docs/adr/0122-timeseries-rollups.md): the
 * query compiler answers whole hours of hour-aligned buckets from here instead of every point.
 *
 * A statement-level trigger with a transition table folds each insert into `ts_points` (the state
 * engine's binary COPY, the target's INSERT, tools, tests) into them with one grouped upsert, in
 * the inserting transaction, so no write path can miss them and a late point for an old hour adds
 * into that hour. Rows moved from the default partition into a new one are inserted into the
 * partition itself, which does not fire the parent's trigger (they are counted already).
 * `first_*`/`last_*`: the earliest and latest non-null value, ties on time going to the smaller and
 * larger value, the order the query compiler gives first() and last(); float8 compares put NaN
 * above every number in both places. Existing points are rolled up once, under the trigger's lock.
 */
const FOLD = `
  select "state_id", date_trunc('hour', "time", 'UTC'), count(*), count("value"), sum("value"),
         min("value"), max("value"),
         min("time") filter (where "value" is not null),
         (array_agg("value" order by "time", "value") filter (where "value" is not null))[1],
         max("time") filter (where "value" is not null),
         (array_agg("value" order by "time" desc, "value" desc) filter (where "value" is not null))[1]`;

const TAKES_FIRST = `(excluded.first_time is not null and (r.first_time is null or (excluded.first_time, excluded.first_value) < (r.first_time, r.first_value)))`;
const TAKES_LAST = `(excluded.last_time is not null and (r.last_time is null or (excluded.last_time, excluded.last_value) > (r.last_time, r.last_value)))`;

export class Migration20261127170000_ts_rollup_hourly extends Migration {
  override async up(): Promise<void> {
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
    // Retention and partition maintenance cut all states by hour; rows arrive roughly in hour order.
    this.addSql(`create index "ts_rollup_hourly_hour_brin" on "ts_rollup_hourly" using brin ("hour");`);
    // Groups in key order: concurrent batches lock rollup rows in one order, so they cannot deadlock.
    this.addSql(`
      create function "ts_rollup_hourly_fold"() returns trigger language plpgsql as $fold$
      begin
        insert into "ts_rollup_hourly" as r ("state_id", "hour", "n_rows", "n_values", "v_sum", "v_min",
          "v_max", "first_time", "first_value", "last_time", "last_value")
        ${FOLD} from "new_points" group by 1, 2 order by 1, 2
        on conflict ("state_id", "hour") do update set
          "n_rows" = r."n_rows" + excluded."n_rows",
          "n_values" = r."n_values" + excluded."n_values",
          "v_sum" = coalesce(r."v_sum" + excluded."v_sum", r."v_sum", excluded."v_sum"),
          "v_min" = least(r."v_min", excluded."v_min"),
          "v_max" = greatest(r."v_max", excluded."v_max"),
          "first_time" = case when ${TAKES_FIRST} then excluded."first_time" else r."first_time" end,
          "first_value" = case when ${TAKES_FIRST} then excluded."first_value" else r."first_value" end,
          "last_time" = case when ${TAKES_LAST} then excluded."last_time" else r."last_time" end,
          "last_value" = case when ${TAKES_LAST} then excluded."last_value" else r."last_value" end;
        return null;
      end
      $fold$;`);
    this.addSql(`
      create trigger "ts_points_rollup_hourly" after insert on "ts_points"
        referencing new table as "new_points" for each statement execute function "ts_rollup_hourly_fold"();`);
    this.addSql(`insert into "ts_rollup_hourly" ${FOLD} from "ts_points" group by 1, 2;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop trigger if exists "ts_points_rollup_hourly" on "ts_points";`);
    this.addSql(`drop function if exists "ts_rollup_hourly_fold"();`);
    this.addSql(`drop table if exists "ts_rollup_hourly";`);
  }
}
