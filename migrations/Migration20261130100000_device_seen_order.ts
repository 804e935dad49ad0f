import { Migration } from '@mikro-orm/migrations';

/**
 * The last-seen order of devices as an index (docs/adr/0133-last-seen-order.md): `device_seen_order`
 * holds each device's last-seen time cut to the second, indexed `(account_id, seen_second, device_id)`.
 * `virtual_devices.last_seen` stays unindexed (its update with every packet batch stays HOT); the
 * narrow row changes only when the second does, kept by triggers for every writer:
 * - a statement trigger on insert copies the new devices (one statement for a bulk import);
 * - a row trigger on updates of `last_seen` or `account_id` runs only when the second or the account
 *   changed (the WHEN clause is evaluated before any function is called).
 * Deleting a device deletes its row (foreign key). The list orders by the second from the index and
 * then by the exact time, so the answer is the exact last-seen order.
 */
export class Migration20261130100000_device_seen_order extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "device_seen_order" (
      "device_id" uuid not null primary key references "virtual_devices" ("id") on delete cascade,
      "account_id" uuid not null,
      "seen_second" timestamptz null);`);
    this.addSql(`insert into "device_seen_order" ("device_id", "account_id", "seen_second")
      select "id", "account_id", date_bin('1 second', "last_seen", timestamptz 'epoch') from "virtual_devices";`);
    this.addSql(
      `create index "device_seen_order_list" on "device_seen_order" ("account_id", "seen_second" nulls first, "device_id");`,
    );
    this.addSql(`create function "device_seen_order_added"() returns trigger language plpgsql as $$
      begin
        insert into device_seen_order (device_id, account_id, seen_second)
        select id, account_id, date_bin('1 second', last_seen, timestamptz 'epoch') from added;
        return null;
      end $$;`);
    this.addSql(`create trigger "virtual_devices_seen_order_added" after insert on "virtual_devices"
      referencing new table as added for each statement execute function "device_seen_order_added"();`);
    this.addSql(`create function "device_seen_order_changed"() returns trigger language plpgsql as $$
      begin
        update device_seen_order
           set account_id = new.account_id, seen_second = date_bin('1 second', new.last_seen, timestamptz 'epoch')
         where device_id = new.id;
        return null;
      end $$;`);
    this.addSql(`create trigger "virtual_devices_seen_order_changed" after update of "last_seen", "account_id"
      on "virtual_devices" for each row
      when (old.account_id is distinct from new.account_id
         or date_bin('1 second', old.last_seen, timestamptz 'epoch')
            is distinct from date_bin('1 second', new.last_seen, timestamptz 'epoch'))
      execute function "device_seen_order_changed"();`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop trigger if exists "virtual_devices_seen_order_changed" on "virtual_devices";`);
    this.addSql(`drop trigger if exists "virtual_devices_seen_order_added" on "virtual_devices";`);
    this.addSql(`drop function if exists "device_seen_order_changed"();`);
    this.addSql(`drop function if exists "device_seen_order_added"();`);
    this.addSql(`drop table if exists "device_seen_order";`);
  }
}
