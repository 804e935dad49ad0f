import { Migration } from '@mikro-orm/migrations';

export class Migration20261122023634_twins_states_dashboards extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "dashboards" ("id" uuid not null, "account_id" uuid not null, "title" varchar(200) not null, "description" text not null default '', "layout" jsonb not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "dashboards_pkey" primary key ("id"));`);
    this.addSql(`create index "dashboards_account_id_title_index" on "dashboards" ("account_id", "title");`);

    this.addSql(`create table "digital_twins" ("id" uuid not null, "account_id" uuid not null, "parent_id" uuid null, "path" uuid[] not null, "title" varchar(200) not null, "description" text not null default '', "address" jsonb null, "latitude" double precision null, "longitude" double precision null, "reference_id" varchar(200) null, "custom_properties" jsonb not null, "tags" text[] not null, "use_parent_scope" boolean not null default true, "status" varchar(20) not null default 'active', "dashboard_id" uuid null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "digital_twins_pkey" primary key ("id"));`);
    this.addSql(`create index "digital_twins_parent_id_index" on "digital_twins" ("parent_id");`);
    this.addSql(`create index "digital_twins_dashboard_id_index" on "digital_twins" ("dashboard_id");`);
    this.addSql(`create index "digital_twins_account_id_title_index" on "digital_twins" ("account_id", "title");`);
    this.addSql(`create index "digital_twins_reference_id_index" on "digital_twins" ("reference_id");`);

    this.addSql(`create table "data_states" ("id" uuid not null, "account_id" uuid not null, "twin_id" uuid not null, "key" varchar(200) not null, "title" varchar(200) not null default '', "value_type" varchar(20) not null default 'number', "unit" varchar(40) null, "source" jsonb null, "meta" jsonb not null, "value" jsonb null, "timestamp" timestamptz null, "warning" varchar(300) null, "engine" jsonb not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "data_states_pkey" primary key ("id"));`);
    this.addSql(`create index "data_states_account_id_index" on "data_states" ("account_id");`);
    this.addSql(`alter table "data_states" add constraint "data_states_twin_id_key_unique" unique ("twin_id", "key");`);

    this.addSql(`alter table "dashboards" add constraint "dashboards_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "digital_twins" add constraint "digital_twins_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "digital_twins" add constraint "digital_twins_parent_id_foreign" foreign key ("parent_id") references "digital_twins" ("id") on update cascade on delete set null;`);
    this.addSql(`alter table "digital_twins" add constraint "digital_twins_dashboard_id_foreign" foreign key ("dashboard_id") references "dashboards" ("id") on update cascade on delete set null;`);

    this.addSql(`alter table "data_states" add constraint "data_states_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "data_states" add constraint "data_states_twin_id_foreign" foreign key ("twin_id") references "digital_twins" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "accounts" add column "time_zone" varchar(64) not null default 'UTC';`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "digital_twins" drop constraint "digital_twins_dashboard_id_foreign";`);

    this.addSql(`alter table "digital_twins" drop constraint "digital_twins_parent_id_foreign";`);

    this.addSql(`alter table "data_states" drop constraint "data_states_twin_id_foreign";`);

    this.addSql(`drop table if exists "dashboards" cascade;`);

    this.addSql(`drop table if exists "digital_twins" cascade;`);

    this.addSql(`drop table if exists "data_states" cascade;`);

    this.addSql(`alter table "accounts" drop column "time_zone";`);
  }

}
