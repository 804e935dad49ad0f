import { Migration } from '@mikro-orm/migrations';

/**
 * Integration flows, filters, transformers and the flow run records (issue 6, section 4). The
 * stored-only connector kind `smtp` is now the working `smtp-mail` kind: existing rows follow.
 */
export class Migration20261123020000_integration_flows extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "flow_filters" ("id" uuid not null, "account_id" uuid not null, "title" varchar(200) not null, "description" text not null default '', "input_type" varchar(20) not null default 'Generic', "code" text not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "flow_filters_pkey" primary key ("id"));`);
    this.addSql(`create index "flow_filters_account_id_title_index" on "flow_filters" ("account_id", "title");`);
    this.addSql(`create table "flow_transformers" ("id" uuid not null, "account_id" uuid not null, "title" varchar(200) not null, "description" text not null default '', "code" text not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "flow_transformers_pkey" primary key ("id"));`);
    this.addSql(`create index "flow_transformers_account_id_title_index" on "flow_transformers" ("account_id", "title");`);
    this.addSql(`create table "integration_flows" ("id" uuid not null, "account_id" uuid not null, "title" varchar(200) not null, "description" text not null default '', "active" boolean not null default true, "source" jsonb not null, "steps" jsonb not null, "targets" jsonb not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "integration_flows_pkey" primary key ("id"));`);
    this.addSql(`create index "integration_flows_account_id_title_index" on "integration_flows" ("account_id", "title");`);
    this.addSql(`create table "integration_flow_runs" ("id" uuid not null, "flow_id" uuid not null, "trigger" varchar(20) not null, "outcome" varchar(20) not null, "input" jsonb null, "output" jsonb null, "error" jsonb null, "deliveries" jsonb not null, "duration_ms" int not null default 0, "started_at" timestamptz not null, constraint "integration_flow_runs_pkey" primary key ("id"));`);
    this.addSql(`create index "integration_flow_runs_flow_id_started_at_index" on "integration_flow_runs" ("flow_id", "started_at");`);
    this.addSql(`alter table "flow_filters" add constraint "flow_filters_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "flow_transformers" add constraint "flow_transformers_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "integration_flows" add constraint "integration_flows_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "integration_flow_runs" add constraint "integration_flow_runs_flow_id_foreign" foreign key ("flow_id") references "integration_flows" ("id") on update cascade on delete cascade;`);
    this.addSql(`update "connectors" set "type" = 'smtp-mail' where "type" = 'smtp';`);
  }

  override async down(): Promise<void> {
    this.addSql(`update "connectors" set "type" = 'smtp' where "type" = 'smtp-mail';`);
    this.addSql(`drop table if exists "integration_flow_runs" cascade;`);
    this.addSql(`drop table if exists "integration_flows" cascade;`);
    this.addSql(`drop table if exists "flow_transformers" cascade;`);
    this.addSql(`drop table if exists "flow_filters" cascade;`);
  }
}
