import pg from 'pg';
import { from as copyFrom, type CopyStreamQuery } from 'pg-copy-streams';
import type { DatabaseDump, TableDump } from './backup.manifest.js';
import { PORTABLE_SESSION } from './database-dump.js';

/**
 * Loads a dump into a database whose schema the migrations brought to the dump's level, in ONE
 * transaction (a failure leaves no half-loaded tables):
 * 1. foreign keys are dropped and user triggers disabled (the tables load in name order, and a
 *    table owner may do both; disabling PostgreSQL's own constraint triggers would need a superuser);
 * 2. every table is emptied (migrations may have inserted rows the dump also holds);
 * 3. partitions made at run time are created again, then each table's COPY text is streamed in;
 * 4. sequences are set, the foreign keys added back (which checks every row), triggers enabled.
 */
export class DatabaseLoader {
  private current: { table: TableDump; stream: CopyStreamQuery; failure?: Error } | undefined;
  private foreignKeys: Array<{ table: string; name: string; definition: string }> = [];
  private triggerTables: string[] = [];

  private constructor(
    private readonly client: pg.Client,
    private readonly dump: DatabaseDump,
  ) {}

  static async begin(databaseUrl: string, dump: DatabaseDump): Promise<DatabaseLoader> {
    const client = new pg.Client({ connectionString: databaseUrl, application_name: 'stellwerk-restore' });
    await client.connect();
    const loader = new DatabaseLoader(client, dump);
    try {
      await loader.prepare();
    } catch (error) {
      await loader.abort();
      throw error;
    }
    return loader;
  }

  /** The table whose data the member holds (`database/<table>/<part>`), or undefined. */
  tableOf(member: string): TableDump | undefined {
    for (const table of this.dump.tables) if (table.members.includes(member)) return table;
    return undefined;
  }

  /** Streams a member's bytes into its table's COPY (opened at its first member, closed at the next table). */
  async write(table: TableDump, piece: Buffer): Promise<void> {
    if (this.current?.table !== table) {
      await this.endTable();
      this.current = { table, stream: this.openCopy(table) };
    }
    const current = this.current;
    if (current.failure) throw current.failure;
    if (!current.stream.write(piece)) {
      await new Promise<void>((resolve) => {
        current.stream.once('drain', resolve);
        current.stream.once('error', () => resolve());
      });
      // Set by the stream's error listener while this awaited.
      const failure = (current as { failure?: Error }).failure;
      if (failure instanceof Error) throw failure;
    }
  }

  async finish(): Promise<void> {
    await this.endTable();
    const { client } = this;
    for (const sequence of this.dump.sequences) {
      await client.query('SELECT setval($1::regclass, $2::bigint, $3)', [
        pg.escapeIdentifier(sequence.name),
        sequence.lastValue,
        sequence.isCalled,
      ]);
    }
    for (const fk of this.foreignKeys) {
      await client.query(
        `ALTER TABLE ${pg.escapeIdentifier(fk.table)} ADD CONSTRAINT ${pg.escapeIdentifier(fk.name)} ${fk.definition}`,
      );
    }
    for (const table of this.triggerTables)
      await client.query(`ALTER TABLE ${pg.escapeIdentifier(table)} ENABLE TRIGGER USER`);
    await client.query('COMMIT');
    // Fresh planner statistics: without them the first queries on large tables plan badly.
    await client.query('ANALYZE');
    await client.end();
  }

  async abort(): Promise<void> {
    this.current?.stream.destroy();
    await this.client.query('ROLLBACK').catch(() => undefined);
    await this.client.end().catch(() => undefined);
  }

  private async prepare(): Promise<void> {
    const { client } = this;
    for (const statement of PORTABLE_SESSION) await client.query(statement);
    await client.query('BEGIN');
    const { rows: fks } = await client.query<{ table: string; name: string; definition: string }>(
      `SELECT cl.relname AS table, co.conname AS name, pg_get_constraintdef(co.oid) AS definition
         FROM pg_constraint co JOIN pg_class cl ON cl.oid = co.conrelid
        WHERE co.contype = 'f' AND co.connamespace = current_schema()::regnamespace AND co.conparentid = 0
        ORDER BY cl.relname, co.conname`,
    );
    this.foreignKeys = fks;
    for (const fk of fks) {
      await client.query(
        `ALTER TABLE ${pg.escapeIdentifier(fk.table)} DROP CONSTRAINT ${pg.escapeIdentifier(fk.name)}`,
      );
    }
    const { rows: triggered } = await client.query<{ table: string }>(
      `SELECT DISTINCT cl.relname AS table FROM pg_trigger t JOIN pg_class cl ON cl.oid = t.tgrelid
        WHERE NOT t.tgisinternal AND cl.relnamespace = current_schema()::regnamespace`,
    );
    this.triggerTables = triggered.map((row) => row.table);
    for (const table of this.triggerTables)
      await client.query(`ALTER TABLE ${pg.escapeIdentifier(table)} DISABLE TRIGGER USER`);
    const { rows: existing } = await client.query<{ name: string }>(
      `SELECT relname AS name FROM pg_class
        WHERE relnamespace = current_schema()::regnamespace AND relkind IN ('r', 'p') AND NOT relispartition
          AND relname <> 'mikro_orm_migrations'`,
    );
    if (existing.length > 0)
      await client.query(`TRUNCATE ${existing.map((row) => pg.escapeIdentifier(row.name)).join(', ')}`);
    for (const table of this.dump.tables) {
      if (!table.partitionOf) continue;
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${pg.escapeIdentifier(table.name)} PARTITION OF ${pg.escapeIdentifier(table.partitionOf.parent)} ${table.partitionOf.bound}`,
      );
    }
    const { rows: present } = await client.query<{ name: string }>(
      `SELECT relname AS name FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relkind = 'r'`,
    );
    const names = new Set(present.map((row) => row.name));
    const missing = this.dump.tables.find((table) => !names.has(table.name));
    if (missing) throw new Error(`table ${missing.name} of the archive does not exist after the migrations`);
  }

  private openCopy(table: TableDump): CopyStreamQuery {
    const columns = table.columns.map((column) => pg.escapeIdentifier(column)).join(', ');
    const stream = this.client.query(
      copyFrom(`COPY ${pg.escapeIdentifier(table.name)} (${columns}) FROM STDIN`),
    );
    stream.on('error', (error: Error) => {
      if (this.current?.stream === stream) this.current.failure = error;
    });
    return stream;
  }

  private async endTable(): Promise<void> {
    const current = this.current;
    if (!current) return;
    this.current = undefined;
    await new Promise<void>((resolve, reject) => {
      if (current.failure) return reject(current.failure);
      current.stream.once('finish', () => resolve());
      current.stream.once('error', reject);
      current.stream.end();
    });
    if (current.stream.rowCount !== current.table.rows)
      throw new Error(
        `table ${current.table.name}: ${current.stream.rowCount} rows loaded, the archive lists ${current.table.rows}`,
      );
  }
}
