import { Migration } from '@mikro-orm/migrations';

/** A downlink's fPort is LoRaWAN's: connectors that carry none (MQTT, WebSocket, …) store null. */
export class Migration20261203120000_downlink_port_optional extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "downlinks" alter column "f_port" drop not null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`update "downlinks" set "f_port" = 1 where "f_port" is null;`);
    this.addSql(`alter table "downlinks" alter column "f_port" set not null;`);
  }
}
