import { Migration } from '@mikro-orm/migrations';

/**
 * A payload codec's warnings about a packet that did decode, shown in the packet history. Null for
 * almost every packet: written by the ingest commit only for packets that have some.
 */
export class Migration20261126032600_packet_warnings extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "packets" add column "warnings" jsonb null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "packets" drop column "warnings";`);
  }
}
