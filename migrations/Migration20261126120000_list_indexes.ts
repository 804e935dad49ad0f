import { Migration } from '@mikro-orm/migrations';

/**
 * Device and twin lists at utility scale (docs/adr/0121-lists-at-scale.md): order indexes
 * `(account_id, key, id)` that serve any page in either direction, replacing `(account_id, title)`,
 * trigram indexes for the substring search and GIN indexes for tag filters. Devices get fillfactor 90, so the last-seen update
 * of every packet batch stays a HOT update (no index entries) more often.
 */
export class Migration20261126120000_list_indexes extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create extension if not exists pg_trgm;`);
    this.addSql(`drop index if exists "virtual_devices_account_id_title_index";`);
    this.addSql(`drop index if exists "digital_twins_account_id_title_index";`);
    this.addSql(
      `create index "virtual_devices_list_title" on "virtual_devices" ("account_id", lower("title") nulls first, "id") include ("title");`,
    );
    this.addSql(
      `create index "virtual_devices_list_device_id" on "virtual_devices" ("account_id", lower("device_id") nulls first, "id") include ("device_id");`,
    );
    this.addSql(
      `create index "virtual_devices_list_created_at" on "virtual_devices" ("account_id", "created_at" nulls first, "id");`,
    );
    this.addSql(
      `create index "virtual_devices_search" on "virtual_devices" using gin ((title || chr(31) || device_id || chr(31) || coalesce(dev_eui, '') || chr(31) || coalesce(external_id, '')) gin_trgm_ops);`,
    );
    this.addSql(`create index "virtual_devices_tags" on "virtual_devices" using gin ("tags");`);
    this.addSql(`alter table "virtual_devices" set (fillfactor = 90);`);
    this.addSql(`create index "digital_twins_list_title" on "digital_twins" ("account_id", lower("title") nulls first, "id") include ("title");`);
    this.addSql(
      `create index "digital_twins_list_created_at" on "digital_twins" ("account_id", "created_at" nulls first, "id");`,
    );
    this.addSql(`create index "digital_twins_search" on "digital_twins" using gin ("title" gin_trgm_ops);`);
    this.addSql(`create index "digital_twins_tags" on "digital_twins" using gin ("tags");`);
  }

  override async down(): Promise<void> {
    for (const index of [
      'virtual_devices_list_title',
      'virtual_devices_list_device_id',
      'virtual_devices_list_created_at',
      'virtual_devices_search',
      'digital_twins_list_title',
      'digital_twins_list_created_at',
      'digital_twins_search',
      'virtual_devices_tags',
      'digital_twins_tags',
    ])
      this.addSql(`drop index if exists "${index}";`);
    this.addSql(`alter table "virtual_devices" reset (fillfactor);`);
    this.addSql(`create index "virtual_devices_account_id_title_index" on "virtual_devices" ("account_id", "title");`);
    this.addSql(`create index "digital_twins_account_id_title_index" on "digital_twins" ("account_id", "title");`);
  }
}
