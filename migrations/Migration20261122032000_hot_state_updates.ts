import { Migration } from '@mikro-orm/migrations';

/**
 * `device_states` and `data_states` rows are rewritten by every ingest batch (new value, timestamp,
 * engine figures). Half-empty pages let PostgreSQL keep each new row version on the same page
 * (a HOT update: no index entries written), which made the state engine's batch UPDATE 20–30 %
 * faster in a measurement; old versions are pruned on the page without waiting for VACUUM.
 */
export class Migration20261122032000_hot_state_updates extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "device_states" set (fillfactor = 50);`);
    this.addSql(`alter table "data_states" set (fillfactor = 50);`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "device_states" reset (fillfactor);`);
    this.addSql(`alter table "data_states" reset (fillfactor);`);
  }
}
