import { Migration } from '@mikro-orm/migrations';

/** Packets per connector and minute: the overview's ingest rate without counting the packet store. */
export class Migration20261127100000_connector_packet_minutes extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "connector_packet_minutes" ("connector_id" uuid not null, "minute" timestamptz not null, "packets_in" int not null default 0, "packets_failed" int not null default 0, constraint "connector_packet_minutes_pkey" primary key ("connector_id", "minute"));`);
    this.addSql(`create index "connector_packet_minutes_minute_index" on "connector_packet_minutes" ("minute");`);
    this.addSql(`alter table "connector_packet_minutes" add constraint "connector_packet_minutes_connector_id_foreign" foreign key ("connector_id") references "connectors" ("id") on update cascade on delete cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "connector_packet_minutes" cascade;`);
  }

}
