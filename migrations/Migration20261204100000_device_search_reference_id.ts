import { Migration } from '@mikro-orm/migrations';

/**
 * The device list's search also looks in the reference id: the trigram index over the search text
 * (`DEVICE_SEARCH_TEXT` in virtual-device.entity.ts) is built again over the longer expression, so
 * the search's conditions keep matching the index (docs/adr/0140-common-words-in-trigram-searches.md).
 */
const SEARCH = (withReferenceId: boolean) =>
  `create index "virtual_devices_search" on "virtual_devices" using gin ((title || chr(31) || device_id || chr(31) || coalesce(dev_eui, '') || chr(31) || coalesce(external_id, '')${withReferenceId ? ` || chr(31) || coalesce(reference_id, '')` : ''}) gin_trgm_ops);`;

export class Migration20261204100000_device_search_reference_id extends Migration {
  override async up(): Promise<void> {
    this.addSql(`drop index if exists "virtual_devices_search";`);
    this.addSql(SEARCH(true));
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "virtual_devices_search";`);
    this.addSql(SEARCH(false));
  }
}
