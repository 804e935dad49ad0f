import { Migration } from '@mikro-orm/migrations';

/**
 * Alarm reports record the permission scopes of whoever saved them last and look only at members
 * of those scopes (docs/alarms.md). Existing reports were saved without a record: null, unrestricted.
 */
export class Migration20261124051800_alarm_report_permission_scopes extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "alarm_reports" add column "permission_scope_ids" uuid[] null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "alarm_reports" drop column if exists "permission_scope_ids";`);
  }
}
