import { Migration } from '@mikro-orm/migrations';

/**
 * LoRaWAN network servers name a device by its EUI; a device whose `device_id` is something else is
 * found by `(connector_id, dev_eui)` (the ingest path's second lookup).
 */
export class Migration20261126053000_device_eui_lookup extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create index "virtual_devices_connector_id_dev_eui_index" on "virtual_devices" ("connector_id", "dev_eui");`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "virtual_devices_connector_id_dev_eui_index";`);
  }
}
