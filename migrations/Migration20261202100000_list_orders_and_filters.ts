import { Migration } from '@mikro-orm/migrations';

/**
 * Every sort and filter of the device and twin lists served by an index (docs/adr/0139-every-list-order-indexed.md):
 * - order indexes `(account_id, column nulls first, id)` for the device sorts by update time, health
 *   state and operational status and the twin sort by update time. None of these columns is written
 *   by the ingest path (it writes `last_seen` only), so its updates stay HOT;
 * - GIN indexes (`jsonb_path_ops`) on the devices' key-value data and the twins' custom properties
 *   for `filter[kv.<key>]`, written as JSON containment.
 */
const INDEXES = [
  `create index "virtual_devices_list_updated_at" on "virtual_devices" ("account_id", "updated_at" nulls first, "id")`,
  `create index "virtual_devices_list_health_state" on "virtual_devices" ("account_id", "health_state" nulls first, "id")`,
  `create index "virtual_devices_list_operational_status" on "virtual_devices" ("account_id", "operational_status" nulls first, "id")`,
  `create index "virtual_devices_key_values" on "virtual_devices" using gin ("key_value_data" jsonb_path_ops)`,
  `create index "digital_twins_list_updated_at" on "digital_twins" ("account_id", "updated_at" nulls first, "id")`,
  `create index "digital_twins_custom_properties" on "digital_twins" using gin ("custom_properties" jsonb_path_ops)`,
];

export class Migration20261202100000_list_orders_and_filters extends Migration {
  override async up(): Promise<void> {
    for (const index of INDEXES) this.addSql(`${index};`);
  }

  override async down(): Promise<void> {
    for (const index of INDEXES) this.addSql(`drop index if exists "${/"(\w+)"/.exec(index)![1]}";`);
  }
}
