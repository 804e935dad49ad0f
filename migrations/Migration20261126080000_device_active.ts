import { Migration } from '@mikro-orm/migrations';

/** A device can be deactivated: its packets are kept in the history but not processed. */
export class Migration20261126080000_device_active extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "virtual_devices" add column "active" boolean not null default true;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "virtual_devices" drop column "active";`);
  }

}
