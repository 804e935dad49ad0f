import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { ChunkedMember, type ArchiveWriter } from './archive.js';
import { VERSION_SETTING } from './schema-version.js';
import { DATABASE_PREFIX, type DatabaseDump, type SequenceDump, type TableDump } from './backup.manifest.js';

/**
 * The logical dump (docs/adr/0107): every table of the Stellwerk schema as COPY text, all read in
 * one REPEATABLE READ READ ONLY transaction, so the tables agree with each other and with the spool
 * position they record. Works over any connection that may read the tables: embedded or external.
 */

/** Not copied: the migration log is rebuilt by replaying the migrations; node heartbeats describe the
 * processes that ran then, not data (the restored installation's nodes write their own). */
export const TABLES_NOT_DUMPED = new Set(['mikro_orm_migrations', 'server_nodes']);

export const SPOOL_POSITION_PREFIX = 'packet_spool_position:';

/** Output that reads back the same on any PostgreSQL version and in any time zone. */
export const PORTABLE_SESSION = [
  "SET datestyle = 'ISO, YMD'",
  "SET intervalstyle = 'postgres'",
  "SET timezone = 'UTC'",
  'SET extra_float_digits = 3',
  "SET bytea_output = 'hex'",
  "SET client_encoding = 'UTF8'",
];

export interface DumpResult {
  dump: DatabaseDump;
  /** Committed spool positions by spool id, as the snapshot saw them. */
  spoolPositions: Map<string, number>;
  snapshotAt: Date;
}

interface CatalogTable {
  oid: number;
  name: string;
  parent: string | null;
  bound: string | null;
}

export async function dumpDatabase(databaseUrl: string, archive: ArchiveWriter): Promise<DumpResult> {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: 'stellwerk-backup' });
  await client.connect();
  try {
    for (const statement of PORTABLE_SESSION) await client.query(statement);
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    // The snapshot is taken by the transaction's first query: this one.
    const { rows: now } = await client.query<{ at: Date; version: string }>(
      `SELECT clock_timestamp() AS at, current_setting('server_version') AS version`,
    );
    const migrations = await appliedMigrations(client);
    const settings = await client.query<{ key: string; value: string }>(
      `SELECT key, value #>> '{}' AS value FROM system_settings WHERE key = $1 OR key LIKE $2`,
      [VERSION_SETTING, `${SPOOL_POSITION_PREFIX}%`],
    );
    const tables: TableDump[] = [];
    for (const table of await catalogTables(client)) tables.push(await dumpTable(client, archive, table));
    const sequences = await readSequences(client);
    await client.query('COMMIT');
    const spoolPositions = new Map<string, number>();
    let migratedBy: string | null = null;
    for (const { key, value } of settings.rows) {
      if (key === VERSION_SETTING) migratedBy = value;
      else spoolPositions.set(key.slice(SPOOL_POSITION_PREFIX.length), Number(value));
    }
    return {
      dump: {
        postgresVersion: now[0]!.version,
        migrations,
        lastMigration: migrations.at(-1)!,
        migratedBy,
        tables,
        sequences,
      },
      spoolPositions,
      snapshotAt: now[0]!.at,
    };
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function appliedMigrations(client: pg.Client): Promise<string[]> {
  const { rows: found } = await client.query<{ name: string | null }>(
    `SELECT to_regclass('mikro_orm_migrations')::text AS name`,
  );
  if (!found[0]?.name)
    throw new Error('the database has no Stellwerk schema (no migrations applied): nothing to back up');
  const { rows } = await client.query<{ name: string }>('SELECT name FROM mikro_orm_migrations ORDER BY id');
  if (rows.length === 0) throw new Error('the database has no migrations applied: nothing to back up');
  return rows.map((row) => row.name);
}

/** Tables holding rows (partitioned parents hold none; their partitions are dumped one by one). */
async function catalogTables(client: pg.Client): Promise<CatalogTable[]> {
  const { rows } = await client.query<CatalogTable>(
    `SELECT c.oid, c.relname AS name,
            (SELECT p.relname FROM pg_inherits i JOIN pg_class p ON p.oid = i.inhparent WHERE i.inhrelid = c.oid) AS parent,
            CASE WHEN c.relispartition THEN pg_get_expr(c.relpartbound, c.oid) END AS bound
       FROM pg_class c
      WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r' AND c.relpersistence <> 't'
      ORDER BY c.relname`,
  );
  return rows.filter((row) => !TABLES_NOT_DUMPED.has(row.name));
}

async function dumpTable(client: pg.Client, archive: ArchiveWriter, table: CatalogTable): Promise<TableDump> {
  const { rows } = await client.query<{ name: string }>(
    `SELECT attname AS name FROM pg_attribute
      WHERE attrelid = $1 AND attnum > 0 AND NOT attisdropped AND attgenerated = '' ORDER BY attnum`,
    [table.oid],
  );
  const columns = rows.map((row) => row.name);
  const member = new ChunkedMember(archive, `${DATABASE_PREFIX}${table.name}`);
  const stream = client.query(
    copyTo(
      `COPY ${pg.escapeIdentifier(table.name)} (${columns.map(pg.escapeIdentifier).join(', ')}) TO STDOUT`,
    ),
  );
  let lines = 0;
  for await (const piece of stream as AsyncIterable<Buffer>) {
    lines += countNewlines(piece);
    await member.write(piece);
  }
  await member.end();
  return {
    name: table.name,
    columns,
    rows: lines,
    members: member.names,
    ...(table.parent && table.bound ? { partitionOf: { parent: table.parent, bound: table.bound } } : {}),
  };
}

async function readSequences(client: pg.Client): Promise<SequenceDump[]> {
  const { rows: names } = await client.query<{ name: string }>(
    `SELECT relname AS name FROM pg_class
      WHERE relnamespace = current_schema()::regnamespace AND relkind = 'S' ORDER BY relname`,
  );
  const sequences: SequenceDump[] = [];
  for (const { name } of names) {
    const { rows } = await client.query<{ last_value: string; is_called: boolean }>(
      `SELECT last_value::text, is_called FROM ${pg.escapeIdentifier(name)}`,
    );
    sequences.push({ name, lastValue: rows[0]!.last_value, isCalled: rows[0]!.is_called });
  }
  return sequences;
}

/** COPY text ends every row with a newline and escapes newlines inside values: newlines are rows. */
export function countNewlines(bytes: Buffer): number {
  let count = 0;
  for (let at = bytes.indexOf(10); at !== -1; at = bytes.indexOf(10, at + 1)) count += 1;
  return count;
}
