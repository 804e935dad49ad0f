import { Migration } from '@mikro-orm/migrations';

/**
 * Site plans of an account (docs/console.md, Site plans): placement and display settings, and the
 * image in its own table so that lists never read it.
 */
export class Migration20261127110000_site_plans extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "site_plans" ("id" uuid not null, "account_id" uuid not null, "title" varchar(200) not null, "corners" jsonb null, "opacity" double precision not null default 0.85, "min_zoom" double precision not null default 15, "image_type" varchar(16) null, "image_bytes" int null, "image_updated_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "site_plans_pkey" primary key ("id"));`);
    this.addSql(`create index "site_plans_account_id_index" on "site_plans" ("account_id");`);

    this.addSql(`create table "site_plan_images" ("site_plan_id" uuid not null, "content" bytea not null, constraint "site_plan_images_pkey" primary key ("site_plan_id"));`);

    this.addSql(`alter table "site_plans" add constraint "site_plans_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "site_plan_images" add constraint "site_plan_images_site_plan_id_foreign" foreign key ("site_plan_id") references "site_plans" ("id") on update cascade on delete cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "site_plan_images" drop constraint "site_plan_images_site_plan_id_foreign";`);

    this.addSql(`drop table if exists "site_plans" cascade;`);

    this.addSql(`drop table if exists "site_plan_images" cascade;`);
  }
}
