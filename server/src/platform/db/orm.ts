import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MikroORM, type EntitySchema, type Options } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import type { Logger } from 'pino';

/** `<repo>/migrations` from the sources, `<repo>/dist/migrations` from the build: four levels up either way. */
export const MIGRATIONS_DIR = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../../migrations',
);

export interface OrmOptions {
  clientUrl: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  entities: EntitySchema<any>[];
  log?: Logger;
  poolMax?: number;
}

export function ormConfig(options: OrmOptions): Options {
  return {
    clientUrl: options.clientUrl,
    entities: options.entities,
    extensions: [Migrator],
    forceUtcTimezone: true,
    discovery: { warnWhenNoEntities: true },
    // Time-series tables (partitioned `ts_points`, its partitions, the outbox) are managed by
    // hand-written migrations and the partition maintenance of timeseries/, not by entities; so is
    // the devices' last-seen order, which triggers on `virtual_devices` keep (docs/adr/0133), and the
    // row counts of the large lists, kept by triggers too (docs/adr/0136).
    schemaGenerator: { skipTables: [/^ts_/, 'device_seen_order', 'list_row_counts'] },
    pool: { min: 0, max: options.poolMax ?? 10 },
    // Named in pg_stat_activity, as every connection of the server is (the ingest's own pools too).
    driverOptions: {
      connection: { application_name: 'stellwerk' },
      // knex writes to the console by default ("Connection Error: Connection ended unexpectedly" for
      // each pooled connection a stopped database closed): into the log, at debug, since the
      // database's availability is reported once by DatabaseAvailability.
      log: {
        warn: (message: string) => options.log?.debug({ part: 'knex' }, String(message)),
        error: (message: string) => options.log?.warn({ part: 'knex' }, String(message)),
        deprecate: (message: string) => options.log?.debug({ part: 'knex' }, String(message)),
        debug: (message: string) => options.log?.debug({ part: 'knex' }, String(message)),
      },
    },
    debug: false,
    allowGlobalContext: false,
    migrations: {
      path: MIGRATIONS_DIR,
      glob: '!(*.d).{js,ts}',
      tableName: 'mikro_orm_migrations',
      transactional: true,
      allOrNothing: true,
      snapshot: false,
      emit: 'ts',
      fileName: (timestamp: string, name?: string) => `Migration${timestamp}${name ? `_${name}` : ''}`,
    },
    logger: (message: string) => options.log?.debug({ orm: message }, 'orm'),
  };
}

export async function openOrm(options: OrmOptions): Promise<MikroORM> {
  return MikroORM.init(ormConfig(options));
}

/** Applies pending migrations; returns their names. */
export async function migrateUp(orm: MikroORM): Promise<string[]> {
  const applied = await orm.getMigrator().up();
  return applied.map((m) => m.name);
}

/** SQL that would bring the database in line with the entities; empty when migrations match. */
export async function schemaDrift(orm: MikroORM): Promise<string> {
  return (await orm.getSchemaGenerator().getUpdateSchemaSQL({ wrap: false })).trim();
}
