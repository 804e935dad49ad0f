import { Migration } from '@mikro-orm/migrations';

/**
 * `ts_points`: the per-state range index also carries `value`, so an aggregate over one state's
 * range (hourly mean over 30 days) is an index-only scan instead of one heap page per point
 * (points of one state are spread over the table in arrival order). Measured in docs/performance.md.
 */
export class Migration20261122031000_timeseries_points_covering_index extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index "ts_points_state_id_time_value_index" on "ts_points" ("state_id", "time") include ("value");`);
    this.addSql(`drop index if exists "ts_points_state_id_time_index";`);
  }

  override async down(): Promise<void> {
    this.addSql(`create index "ts_points_state_id_time_index" on "ts_points" ("state_id", "time");`);
    this.addSql(`drop index if exists "ts_points_state_id_time_value_index";`);
  }
}
