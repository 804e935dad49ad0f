import { Migration } from '@mikro-orm/migrations';

/**
 * Permission scopes of digital twins: the twin's own scope and its effective scope (the own
 * scope, or the parent's effective one while `use_parent_scope` holds), kept up to date by the
 * twins service so scope-restricted lists filter on one indexed column. Existing twins had no
 * scope, so NULL is the right effective value for all of them.
 */
export class Migration20261122040000_twin_permission_scopes extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table "digital_twins" add column "permission_scope_id" uuid null, add column "effective_permission_scope_id" uuid null;`,
    );
    this.addSql(
      `alter table "digital_twins" add constraint "digital_twins_permission_scope_id_foreign" foreign key ("permission_scope_id") references "permission_scopes" ("id") on update cascade on delete restrict;`,
    );
    this.addSql(
      `alter table "digital_twins" add constraint "digital_twins_effective_permission_scope_id_foreign" foreign key ("effective_permission_scope_id") references "permission_scopes" ("id") on update cascade on delete restrict;`,
    );
    this.addSql(
      `create index "digital_twins_permission_scope_id_index" on "digital_twins" ("permission_scope_id");`,
    );
    this.addSql(
      `create index "digital_twins_effective_permission_scope_id_index" on "digital_twins" ("effective_permission_scope_id");`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "digital_twins" drop constraint "digital_twins_effective_permission_scope_id_foreign";`);
    this.addSql(`alter table "digital_twins" drop constraint "digital_twins_permission_scope_id_foreign";`);
    this.addSql(`drop index "digital_twins_effective_permission_scope_id_index";`);
    this.addSql(`drop index "digital_twins_permission_scope_id_index";`);
    this.addSql(
      `alter table "digital_twins" drop column "permission_scope_id", drop column "effective_permission_scope_id";`,
    );
  }
}
