import { Migration } from '@mikro-orm/migrations';

/**
 * Rules record the permission scopes of whoever saved them last and run only over twins of those
 * scopes (docs/rules.md). Existing rules were saved without a record: null, unrestricted, as they ran.
 */
export class Migration20261124051700_rule_permission_scopes extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "rules" add column "permission_scope_ids" uuid[] null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "rules" drop column if exists "permission_scope_ids";`);
  }
}
