import { Migration } from '@mikro-orm/migrations';

export class Migration20261122010503_devices_connectors_ingest extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "connectors" ("id" uuid not null, "account_id" uuid not null, "title" varchar(200) not null, "description" text not null default '', "type" varchar(40) not null, "active" boolean not null default true, "config" jsonb not null, "broker_username" varchar(100) null, "broker_password_hash" varchar(64) null, "webhook_token_sealed" text null, "webhook_token_hash" varchar(64) null, "packets_in" bigint not null default 0, "packets_failed" bigint not null default 0, "last_packet_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "connectors_pkey" primary key ("id"));`);
    this.addSql(`create index "connectors_account_id_index" on "connectors" ("account_id");`);
    this.addSql(`create index "connectors_type_index" on "connectors" ("type");`);
    this.addSql(`alter table "connectors" add constraint "connectors_broker_username_unique" unique ("broker_username");`);
    this.addSql(`alter table "connectors" add constraint "connectors_webhook_token_hash_unique" unique ("webhook_token_hash");`);

    this.addSql(`create table "connector_logs" ("id" uuid not null, "connector_id" uuid not null, "level" varchar(8) not null default 'info', "message" text not null, "details" jsonb not null, "created_at" timestamptz not null, constraint "connector_logs_pkey" primary key ("id"));`);
    this.addSql(`create index "connector_logs_connector_id_created_at_index" on "connector_logs" ("connector_id", "created_at");`);

    this.addSql(`create table "device_drivers" ("id" uuid not null, "account_id" uuid not null, "title" varchar(200) not null, "description" text not null default '', "shared" boolean not null default false, "parser" jsonb not null, "target_variables" jsonb not null, "health_config" jsonb not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "device_drivers_pkey" primary key ("id"));`);
    this.addSql(`create index "device_drivers_account_id_index" on "device_drivers" ("account_id");`);

    this.addSql(`create table "device_templates" ("id" uuid not null, "account_id" uuid not null, "title" varchar(200) not null, "description" text not null default '', "driver_id" uuid null, "connector_type" varchar(40) null, "tags" text[] not null, "groups" text[] not null, "key_value_data" jsonb not null, "health_config" jsonb null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "device_templates_pkey" primary key ("id"));`);
    this.addSql(`create index "device_templates_account_id_index" on "device_templates" ("account_id");`);
    this.addSql(`create index "device_templates_driver_id_index" on "device_templates" ("driver_id");`);

    this.addSql(`create table "jobs" ("id" uuid not null, "account_id" uuid not null, "type" varchar(60) not null, "status" varchar(16) not null default 'queued', "subject_id" uuid null, "input" jsonb not null, "progress" int not null default 0, "total" int not null default 0, "succeeded" int not null default 0, "failed" int not null default 0, "errors" jsonb not null, "result" jsonb not null, "created_by_user_id" uuid null, "node_id" uuid null, "created_at" timestamptz not null, "started_at" timestamptz null, "finished_at" timestamptz null, "updated_at" timestamptz not null, constraint "jobs_pkey" primary key ("id"));`);
    this.addSql(`create index "jobs_account_id_index" on "jobs" ("account_id");`);
    this.addSql(`create index "jobs_status_created_at_index" on "jobs" ("status", "created_at");`);
    this.addSql(`create index "jobs_subject_id_index" on "jobs" ("subject_id");`);

    this.addSql(`create table "packets" ("id" bigserial primary key, "connector_id" uuid not null, "device_key" varchar(200) not null, "device_uuid" uuid null, "received_at" timestamptz not null, "payload" bytea not null, "source" varchar(16) not null, "status" varchar(16) null, "error" text null);`);
    this.addSql(`create index "packets_device_uuid_id_index" on "packets" ("device_uuid", "id");`);
    this.addSql(`create index "packets_connector_id_id_index" on "packets" ("connector_id", "id");`);

    this.addSql(`create table "virtual_devices" ("id" uuid not null, "account_id" uuid not null, "connector_id" uuid null, "driver_id" uuid null, "template_id" uuid null, "parent_id" uuid null, "permission_scope_id" uuid null, "device_id" varchar(200) not null, "title" varchar(200) not null, "description" text not null default '', "tags" text[] not null, "groups" text[] not null, "key_value_data" jsonb not null, "external_id" varchar(200) null, "reference_id" varchar(200) null, "target_reference_id" varchar(200) null, "operational_status" int null, "activation_method" varchar(8) not null default 'OTAA', "skip_frame_counter_check" boolean not null default false, "dev_eui" varchar(32) null, "end_device_id" varchar(100) null, "application_session_key_sealed" text null, "network_session_key_sealed" text null, "health_state" varchar(40) not null default 'Unknown', "health_config" jsonb null, "last_seen" timestamptz null, "lifecycle_state" varchar(20) null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "virtual_devices_pkey" primary key ("id"));`);
    this.addSql(`create index "virtual_devices_connector_id_index" on "virtual_devices" ("connector_id");`);
    this.addSql(`create index "virtual_devices_driver_id_index" on "virtual_devices" ("driver_id");`);
    this.addSql(`create index "virtual_devices_template_id_index" on "virtual_devices" ("template_id");`);
    this.addSql(`create index "virtual_devices_parent_id_index" on "virtual_devices" ("parent_id");`);
    this.addSql(`create index "virtual_devices_permission_scope_id_index" on "virtual_devices" ("permission_scope_id");`);
    this.addSql(`create index "virtual_devices_account_id_title_index" on "virtual_devices" ("account_id", "title");`);
    this.addSql(`create index "virtual_devices_reference_id_index" on "virtual_devices" ("reference_id");`);
    this.addSql(`alter table "virtual_devices" add constraint "virtual_devices_connector_id_device_id_unique" unique ("connector_id", "device_id");`);

    this.addSql(`create table "device_states" ("device_id" uuid not null, "key" varchar(200) not null, "value" jsonb null, "timestamp" timestamptz not null, "packet_id" bigint null, constraint "device_states_pkey" primary key ("device_id", "key"));`);

    this.addSql(`alter table "connectors" add constraint "connectors_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "connector_logs" add constraint "connector_logs_connector_id_foreign" foreign key ("connector_id") references "connectors" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "device_drivers" add constraint "device_drivers_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "device_templates" add constraint "device_templates_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "device_templates" add constraint "device_templates_driver_id_foreign" foreign key ("driver_id") references "device_drivers" ("id") on update cascade on delete restrict;`);

    this.addSql(`alter table "jobs" add constraint "jobs_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "virtual_devices" add constraint "virtual_devices_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "virtual_devices" add constraint "virtual_devices_connector_id_foreign" foreign key ("connector_id") references "connectors" ("id") on update cascade on delete restrict;`);
    this.addSql(`alter table "virtual_devices" add constraint "virtual_devices_driver_id_foreign" foreign key ("driver_id") references "device_drivers" ("id") on update cascade on delete restrict;`);
    this.addSql(`alter table "virtual_devices" add constraint "virtual_devices_template_id_foreign" foreign key ("template_id") references "device_templates" ("id") on update cascade on delete set null;`);
    this.addSql(`alter table "virtual_devices" add constraint "virtual_devices_parent_id_foreign" foreign key ("parent_id") references "virtual_devices" ("id") on update cascade on delete set null;`);
    this.addSql(`alter table "virtual_devices" add constraint "virtual_devices_permission_scope_id_foreign" foreign key ("permission_scope_id") references "permission_scopes" ("id") on update cascade on delete restrict;`);

    this.addSql(`alter table "device_states" add constraint "device_states_device_id_foreign" foreign key ("device_id") references "virtual_devices" ("id") on update cascade on delete cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "connector_logs" drop constraint "connector_logs_connector_id_foreign";`);

    this.addSql(`alter table "virtual_devices" drop constraint "virtual_devices_connector_id_foreign";`);

    this.addSql(`alter table "device_templates" drop constraint "device_templates_driver_id_foreign";`);

    this.addSql(`alter table "virtual_devices" drop constraint "virtual_devices_driver_id_foreign";`);

    this.addSql(`alter table "virtual_devices" drop constraint "virtual_devices_template_id_foreign";`);

    this.addSql(`alter table "virtual_devices" drop constraint "virtual_devices_parent_id_foreign";`);

    this.addSql(`alter table "device_states" drop constraint "device_states_device_id_foreign";`);

    this.addSql(`drop table if exists "connectors" cascade;`);

    this.addSql(`drop table if exists "connector_logs" cascade;`);

    this.addSql(`drop table if exists "device_drivers" cascade;`);

    this.addSql(`drop table if exists "device_templates" cascade;`);

    this.addSql(`drop table if exists "jobs" cascade;`);

    this.addSql(`drop table if exists "packets" cascade;`);

    this.addSql(`drop table if exists "virtual_devices" cascade;`);

    this.addSql(`drop table if exists "device_states" cascade;`);
  }

}
