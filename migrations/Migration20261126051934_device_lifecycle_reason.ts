import { Migration } from '@mikro-orm/migrations';

/** Why a network server did not delete a device (lifecycle state DeletionFailed). */
export class Migration20261126051934_device_lifecycle_reason extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "virtual_devices" add column "lifecycle_reason" varchar(500) null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "virtual_devices" drop column "lifecycle_reason";`);
  }

}
