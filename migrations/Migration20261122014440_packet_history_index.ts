import { Migration } from '@mikro-orm/migrations';

export class Migration20261122014440_packet_history_index extends Migration {

  override async up(): Promise<void> {
    this.addSql(`drop index "packets_connector_id_id_index";`);
    this.addSql(`drop index "packets_device_uuid_id_index";`);

    this.addSql(`create index "packets_connector_id_device_key_id_index" on "packets" ("connector_id", "device_key", "id");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "packets_connector_id_device_key_id_index";`);

    this.addSql(`create index "packets_connector_id_id_index" on "packets" ("connector_id", "id");`);
    this.addSql(`create index "packets_device_uuid_id_index" on "packets" ("device_uuid", "id");`);
  }

}
