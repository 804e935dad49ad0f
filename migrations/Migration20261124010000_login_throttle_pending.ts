import { Migration } from '@mikro-orm/migrations';

/**
 * `login_throttle.pending`: attempts that hold a place in a key's budget while their secret is
 * being checked, so concurrent attempts cannot all pass the check before any failure is counted
 * (docs/adr/0021-login-throttling.md).
 */
export class Migration20261124010000_login_throttle_pending extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "login_throttle" add column "pending" int not null default 0;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "login_throttle" drop column "pending";`);
  }
}
