import { Migration } from '@mikro-orm/migrations';

/** Export plans (docs/exports.md); their runs are rows of `jobs` of type `export`. */
export class Migration20261127160000_export_plans extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "export_plans" ("id" uuid not null, "account_id" uuid not null, "title" varchar(200) not null, "selection" jsonb not null, "range" jsonb not null, "time_zone" varchar(64) not null default 'UTC', "shape" jsonb not null, "format" jsonb not null, "mail_connector_id" uuid null, "mail_to" text[] not null, "schedule" varchar(120) null, "next_run_at" timestamptz null, "last_run_at" timestamptz null, "last_job_id" uuid null, "permission_scope_ids" uuid[] null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "export_plans_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "export_plans_account_id_index" on "export_plans" ("account_id");`);
    this.addSql(`create index "export_plans_mail_connector_id_index" on "export_plans" ("mail_connector_id");`);
    this.addSql(`create index "export_plans_next_run_at_index" on "export_plans" ("next_run_at");`);
    this.addSql(
      `alter table "export_plans" add constraint "export_plans_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "export_plans" add constraint "export_plans_mail_connector_id_foreign" foreign key ("mail_connector_id") references "connectors" ("id") on update cascade on delete restrict;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "export_plans" cascade;`);
  }
}
