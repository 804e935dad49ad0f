import pino from 'pino';
import { loadConfig } from '../config.js';
import { ENTITIES } from '../entities.js';
import { openDatabase } from '../platform/db/database.js';
import { migrateUp, openOrm, schemaDrift } from '../platform/db/orm.js';

/**
 * `npm run migrate` applies pending migrations; `migrate:create <name>` writes a new one from
 * the entity diff; `migrate:check` exits 1 when entities and migrations disagree.
 */
const command = process.argv[2] ?? 'up';
const log = pino({ level: 'info' });
const config = loadConfig();
const database = await openDatabase(config, log);
const orm = await openOrm({ clientUrl: database.url, entities: ENTITIES, log });
let exitCode = 0;
try {
  if (command === 'up') {
    const applied = await migrateUp(orm);
    log.info({ applied }, applied.length ? 'migrations applied' : 'database is up to date');
  } else if (command === 'create') {
    await migrateUp(orm);
    const result = await orm.getMigrator().createMigration(undefined, false, false, process.argv[3]);
    log.info({ file: result.fileName || 'none: no changes' }, 'migration created');
  } else if (command === 'check') {
    await migrateUp(orm);
    const drift = await schemaDrift(orm);
    if (drift) {
      log.error({ drift }, 'entities and migrations disagree; run npm run migrate:create');
      exitCode = 1;
    } else log.info('entities and migrations agree');
  } else {
    log.error(`unknown command ${command}; use up, create or check`);
    exitCode = 2;
  }
} finally {
  await orm.close();
  await database.close();
}
process.exit(exitCode);
