import { Migration } from '@mikro-orm/migrations';

/**
 * Device health evaluation (docs/device-health.md): why a device has its health, when it was last
 * evaluated and is due next, and the own schedule of manual health rules. Existing devices get
 * their daily slot from the health scheduler's first rounds (next check null).
 */
export class Migration20261123030000_device_health extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "virtual_devices" add column "health_reason" varchar(300) null, add column "health_checked_at" timestamptz null, add column "health_next_check_at" timestamptz null, add column "health_schedule" jsonb null, add column "health_schedule_anchor" timestamptz null;`);
    this.addSql(`create index "virtual_devices_health_next_check_at_index" on "virtual_devices" ("health_next_check_at");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "virtual_devices_health_next_check_at_index";`);
    this.addSql(`alter table "virtual_devices" drop column if exists "health_reason", drop column if exists "health_checked_at", drop column if exists "health_next_check_at", drop column if exists "health_schedule", drop column if exists "health_schedule_anchor";`);
  }
}
