import { Migration } from '@mikro-orm/migrations';

/**
 * LoRaWAN gateways (docs/lorawan.md, Gateways): the gateways of an account, their hourly reception
 * figures (count and RSSI/SNR sums, for the 24 h means) and the devices each one heard.
 */
export class Migration20261126044945_gateways extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "gateways" ("id" uuid not null, "account_id" uuid not null, "permission_scope_id" uuid null, "connector_id" uuid null, "eui" varchar(16) not null, "network_id" varchar(100) null, "title" varchar(200) not null, "description" text not null default '', "tags" text[] not null, "latitude" double precision null, "longitude" double precision null, "altitude" double precision null, "offline_after_seconds" int null, "status" varchar(8) not null default 'offline', "status_changed_at" timestamptz null, "last_seen_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "gateways_pkey" primary key ("id"));`);
    this.addSql(`create index "gateways_permission_scope_id_index" on "gateways" ("permission_scope_id");`);
    this.addSql(`create index "gateways_connector_id_index" on "gateways" ("connector_id");`);
    this.addSql(`create index "gateways_account_id_network_id_index" on "gateways" ("account_id", "network_id");`);
    this.addSql(`create index "gateways_status_last_seen_at_index" on "gateways" ("status", "last_seen_at");`);
    this.addSql(`alter table "gateways" add constraint "gateways_account_id_eui_unique" unique ("account_id", "eui");`);

    this.addSql(`create table "gateway_reception_hours" ("gateway_id" uuid not null, "hour" timestamptz not null, "uplinks" int not null default 0, "rssi_sum" double precision not null default 0, "rssi_count" int not null default 0, "snr_sum" double precision not null default 0, "snr_count" int not null default 0, constraint "gateway_reception_hours_pkey" primary key ("gateway_id", "hour"));`);
    this.addSql(`create index "gateway_reception_hours_hour_index" on "gateway_reception_hours" ("hour");`);

    this.addSql(`create table "gateway_devices" ("gateway_id" uuid not null, "device_id" uuid not null, "last_heard_at" timestamptz not null, "rssi" double precision null, "snr" double precision null, "uplinks" int not null default 0, constraint "gateway_devices_pkey" primary key ("gateway_id", "device_id"));`);
    this.addSql(`create index "gateway_devices_device_id_index" on "gateway_devices" ("device_id");`);

    this.addSql(`alter table "gateways" add constraint "gateways_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "gateways" add constraint "gateways_permission_scope_id_foreign" foreign key ("permission_scope_id") references "permission_scopes" ("id") on update cascade on delete restrict;`);
    this.addSql(`alter table "gateways" add constraint "gateways_connector_id_foreign" foreign key ("connector_id") references "connectors" ("id") on update cascade on delete set null;`);

    this.addSql(`alter table "gateway_reception_hours" add constraint "gateway_reception_hours_gateway_id_foreign" foreign key ("gateway_id") references "gateways" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "gateway_devices" add constraint "gateway_devices_gateway_id_foreign" foreign key ("gateway_id") references "gateways" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "gateway_devices" add constraint "gateway_devices_device_id_foreign" foreign key ("device_id") references "virtual_devices" ("id") on update cascade on delete cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "gateway_reception_hours" drop constraint "gateway_reception_hours_gateway_id_foreign";`);

    this.addSql(`alter table "gateway_devices" drop constraint "gateway_devices_gateway_id_foreign";`);

    this.addSql(`drop table if exists "gateways" cascade;`);

    this.addSql(`drop table if exists "gateway_reception_hours" cascade;`);

    this.addSql(`drop table if exists "gateway_devices" cascade;`);
  }
}
