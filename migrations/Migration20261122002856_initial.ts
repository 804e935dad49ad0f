import { Migration } from '@mikro-orm/migrations';

export class Migration20261122002856_initial extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "accounts" ("id" uuid not null, "parent_id" uuid null, "path" uuid[] not null, "hierarchy_level" int not null default 0, "title" varchar(200) not null, "description" text null, "mandatory_two_factor" boolean not null default false, "retention_months" double precision not null default 24, "ui_settings" jsonb not null, "meta_info" jsonb not null, "modules" jsonb not null, "oauth_config" jsonb null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "accounts_pkey" primary key ("id"));`);
    this.addSql(`create index "accounts_parent_id_index" on "accounts" ("parent_id");`);

    this.addSql(`create table "announcements" ("id" uuid not null, "account_id" uuid not null, "title" varchar(200) not null, "message" text not null, "severity" varchar(16) not null default 'info', "active" boolean not null default true, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "announcements_pkey" primary key ("id"));`);
    this.addSql(`create index "announcements_account_id_index" on "announcements" ("account_id");`);

    this.addSql(`create table "api_keys" ("id" uuid not null, "account_id" uuid not null, "title" varchar(200) not null, "prefix" varchar(16) not null, "key_hash" varchar(64) not null, "permissions" text[] not null, "active" boolean not null default true, "created_by_user_id" uuid null, "last_used_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "api_keys_pkey" primary key ("id"));`);
    this.addSql(`create index "api_keys_account_id_index" on "api_keys" ("account_id");`);
    this.addSql(`alter table "api_keys" add constraint "api_keys_key_hash_unique" unique ("key_hash");`);

    this.addSql(`create table "login_throttle" ("key" varchar(400) not null, "failures" int not null default 0, "window_start" timestamptz not null, "locked_until" timestamptz null, constraint "login_throttle_pkey" primary key ("key"));`);

    this.addSql(`create table "permission_scopes" ("id" uuid not null, "account_id" uuid not null, "title" varchar(200) not null, "description" text not null default '', "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "permission_scopes_pkey" primary key ("id"));`);
    this.addSql(`create index "permission_scopes_account_id_index" on "permission_scopes" ("account_id");`);
    this.addSql(`alter table "permission_scopes" add constraint "permission_scopes_account_id_title_unique" unique ("account_id", "title");`);

    this.addSql(`create table "roles" ("id" uuid not null, "account_id" uuid null, "name" varchar(100) not null, "description" text not null default '', "permissions" text[] not null, "built_in" boolean not null default false, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "roles_pkey" primary key ("id"));`);
    this.addSql(`create index "roles_account_id_index" on "roles" ("account_id");`);
    this.addSql(`alter table "roles" add constraint "roles_account_id_name_unique" unique ("account_id", "name");`);

    this.addSql(`create table "server_nodes" ("id" uuid not null, "name" varchar(200) not null, "hostname" varchar(200) not null, "pid" int not null, "version" varchar(40) not null, "started_at" timestamptz not null, "last_heartbeat" timestamptz not null, "stopped_at" timestamptz null, "details" jsonb not null, constraint "server_nodes_pkey" primary key ("id"));`);

    this.addSql(`create table "system_settings" ("key" varchar(100) not null, "value" jsonb not null, "updated_at" timestamptz not null, constraint "system_settings_pkey" primary key ("key"));`);

    this.addSql(`create table "users" ("id" uuid not null, "account_id" uuid not null, "email" varchar(320) not null, "name" varchar(200) not null default '', "password_hash" text null, "locale" varchar(16) not null default 'en', "active" boolean not null default true, "totp_secret_sealed" text null, "totp_enabled" boolean not null default false, "totp_last_step" bigint null, "last_login_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "users_pkey" primary key ("id"));`);
    this.addSql(`create index "users_account_id_index" on "users" ("account_id");`);
    this.addSql(`alter table "users" add constraint "users_email_unique" unique ("email");`);

    this.addSql(`create table "sessions" ("id" uuid not null, "user_id" uuid not null, "kind" varchar(16) not null, "token_hash" varchar(64) not null, "expires_at" timestamptz not null, "revoked_at" timestamptz null, "client_ip" varchar(64) null, "user_agent" varchar(400) null, "created_at" timestamptz not null, constraint "sessions_pkey" primary key ("id"));`);
    this.addSql(`create index "sessions_user_id_index" on "sessions" ("user_id");`);
    this.addSql(`alter table "sessions" add constraint "sessions_token_hash_unique" unique ("token_hash");`);

    this.addSql(`create table "recovery_codes" ("id" uuid not null, "user_id" uuid not null, "code_hash" text not null, "used_at" timestamptz null, "created_at" timestamptz not null, constraint "recovery_codes_pkey" primary key ("id"));`);
    this.addSql(`create index "recovery_codes_user_id_index" on "recovery_codes" ("user_id");`);

    this.addSql(`create table "federated_identities" ("id" uuid not null, "user_id" uuid not null, "issuer" varchar(500) not null, "subject" varchar(500) not null, "created_at" timestamptz not null, constraint "federated_identities_pkey" primary key ("id"));`);
    this.addSql(`create index "federated_identities_user_id_index" on "federated_identities" ("user_id");`);
    this.addSql(`alter table "federated_identities" add constraint "federated_identities_issuer_subject_unique" unique ("issuer", "subject");`);

    this.addSql(`create table "announcement_states" ("id" uuid not null, "announcement_id" uuid not null, "user_id" uuid not null, "dismissed" boolean not null default false, "updated_at" timestamptz not null, constraint "announcement_states_pkey" primary key ("id"));`);
    this.addSql(`create index "announcement_states_user_id_index" on "announcement_states" ("user_id");`);
    this.addSql(`alter table "announcement_states" add constraint "announcement_states_announcement_id_user_id_unique" unique ("announcement_id", "user_id");`);

    this.addSql(`create table "user_permission_scopes" ("user_id" uuid not null, "permission_scope_id" uuid not null, constraint "user_permission_scopes_pkey" primary key ("user_id", "permission_scope_id"));`);

    this.addSql(`create table "user_roles" ("user_id" uuid not null, "role_id" uuid not null, constraint "user_roles_pkey" primary key ("user_id", "role_id"));`);

    this.addSql(`alter table "accounts" add constraint "accounts_parent_id_foreign" foreign key ("parent_id") references "accounts" ("id") on update cascade on delete restrict;`);

    this.addSql(`alter table "announcements" add constraint "announcements_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "api_keys" add constraint "api_keys_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "permission_scopes" add constraint "permission_scopes_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "roles" add constraint "roles_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "users" add constraint "users_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "sessions" add constraint "sessions_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "recovery_codes" add constraint "recovery_codes_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "federated_identities" add constraint "federated_identities_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "announcement_states" add constraint "announcement_states_announcement_id_foreign" foreign key ("announcement_id") references "announcements" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "announcement_states" add constraint "announcement_states_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "user_permission_scopes" add constraint "user_permission_scopes_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "user_permission_scopes" add constraint "user_permission_scopes_permission_scope_id_foreign" foreign key ("permission_scope_id") references "permission_scopes" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "user_roles" add constraint "user_roles_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "user_roles" add constraint "user_roles_role_id_foreign" foreign key ("role_id") references "roles" ("id") on update cascade on delete cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "accounts" drop constraint "accounts_parent_id_foreign";`);

    this.addSql(`alter table "announcements" drop constraint "announcements_account_id_foreign";`);

    this.addSql(`alter table "api_keys" drop constraint "api_keys_account_id_foreign";`);

    this.addSql(`alter table "permission_scopes" drop constraint "permission_scopes_account_id_foreign";`);

    this.addSql(`alter table "roles" drop constraint "roles_account_id_foreign";`);

    this.addSql(`alter table "users" drop constraint "users_account_id_foreign";`);

    this.addSql(`alter table "announcement_states" drop constraint "announcement_states_announcement_id_foreign";`);

    this.addSql(`alter table "user_permission_scopes" drop constraint "user_permission_scopes_permission_scope_id_foreign";`);

    this.addSql(`alter table "user_roles" drop constraint "user_roles_role_id_foreign";`);

    this.addSql(`alter table "sessions" drop constraint "sessions_user_id_foreign";`);

    this.addSql(`alter table "recovery_codes" drop constraint "recovery_codes_user_id_foreign";`);

    this.addSql(`alter table "federated_identities" drop constraint "federated_identities_user_id_foreign";`);

    this.addSql(`alter table "announcement_states" drop constraint "announcement_states_user_id_foreign";`);

    this.addSql(`alter table "user_permission_scopes" drop constraint "user_permission_scopes_user_id_foreign";`);

    this.addSql(`alter table "user_roles" drop constraint "user_roles_user_id_foreign";`);

    this.addSql(`drop table if exists "accounts" cascade;`);

    this.addSql(`drop table if exists "announcements" cascade;`);

    this.addSql(`drop table if exists "api_keys" cascade;`);

    this.addSql(`drop table if exists "login_throttle" cascade;`);

    this.addSql(`drop table if exists "permission_scopes" cascade;`);

    this.addSql(`drop table if exists "roles" cascade;`);

    this.addSql(`drop table if exists "server_nodes" cascade;`);

    this.addSql(`drop table if exists "system_settings" cascade;`);

    this.addSql(`drop table if exists "users" cascade;`);

    this.addSql(`drop table if exists "sessions" cascade;`);

    this.addSql(`drop table if exists "recovery_codes" cascade;`);

    this.addSql(`drop table if exists "federated_identities" cascade;`);

    this.addSql(`drop table if exists "announcement_states" cascade;`);

    this.addSql(`drop table if exists "user_permission_scopes" cascade;`);

    this.addSql(`drop table if exists "user_roles" cascade;`);
  }

}
