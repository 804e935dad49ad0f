import { Migration } from '@mikro-orm/migrations';

/** Published dashboards: one share key (hashed) per dashboard, removed with it. */
export class Migration20261126080100_dashboard_shares extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "dashboard_shares" ("id" uuid not null, "dashboard_id" uuid not null, "prefix" varchar(16) not null, "key_hash" varchar(64) not null, "created_by_user_id" uuid null, "issued_at" timestamptz not null, "created_at" timestamptz not null, constraint "dashboard_shares_pkey" primary key ("id"));`,
    );
    this.addSql(
      `alter table "dashboard_shares" add constraint "dashboard_shares_dashboard_id_unique" unique ("dashboard_id");`,
    );
    this.addSql(
      `alter table "dashboard_shares" add constraint "dashboard_shares_key_hash_unique" unique ("key_hash");`,
    );
    this.addSql(
      `alter table "dashboard_shares" add constraint "dashboard_shares_dashboard_id_foreign" foreign key ("dashboard_id") references "dashboards" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "dashboard_shares" cascade;`);
  }
}
