import { Migration } from '@mikro-orm/migrations';

/**
 * What the front door knew about a packet besides its bytes (network-server metadata, the MQTT
 * topic): shown in the packet history and handed to the driver again on a replay. Null for packets
 * whose front door knows none (embedded broker packets on their standard topic, the hub API).
 */
export class Migration20261126050000_packet_meta extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "packets" add column "meta" jsonb null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "packets" drop column "meta";`);
  }
}
