import { Migration } from '@mikro-orm/migrations';

/** The downlink queue per device (server/src/downlinks/): status, retries and network-server ids. */
export class Migration20261126044927_downlinks extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "downlinks" ("id" uuid not null, "account_id" uuid not null, "permission_scope_id" uuid null, "device_id" uuid not null, "connector_id" uuid not null, "device_key" varchar(200) not null, "f_port" smallint not null, "payload" bytea not null, "confirmed" boolean not null default false, "status" varchar(16) not null default 'queued', "error" varchar(1000) null, "remote_id" varchar(200) null, "attempts" int not null default 0, "next_attempt_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "handed_over_at" timestamptz null, "sent_at" timestamptz null, "acknowledged_at" timestamptz null, "created_by" varchar(100) null, constraint "downlinks_pkey" primary key ("id"));`);
    this.addSql(`create index "downlinks_account_id_index" on "downlinks" ("account_id");`);
    this.addSql(`create index "downlinks_permission_scope_id_index" on "downlinks" ("permission_scope_id");`);
    this.addSql(`create index "downlinks_device_id_created_at_index" on "downlinks" ("device_id", "created_at");`);
    this.addSql(`create index "downlinks_connector_id_remote_id_index" on "downlinks" ("connector_id", "remote_id");`);
    this.addSql(`create index "downlinks_next_attempt_at_index" on "downlinks" ("next_attempt_at");`);

    this.addSql(`alter table "downlinks" add constraint "downlinks_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "downlinks" add constraint "downlinks_permission_scope_id_foreign" foreign key ("permission_scope_id") references "permission_scopes" ("id") on update cascade on delete set null;`);
    this.addSql(`alter table "downlinks" add constraint "downlinks_device_id_foreign" foreign key ("device_id") references "virtual_devices" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "downlinks" add constraint "downlinks_connector_id_foreign" foreign key ("connector_id") references "connectors" ("id") on update cascade on delete cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "downlinks" cascade;`);
  }

}
