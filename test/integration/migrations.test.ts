import { spawn } from 'node:child_process';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENTITIES } from '../../server/src/entities.js';
import { openOrm, schemaDrift } from '../../server/src/platform/db/orm.js';
import { createTestDatabase } from './support/database.js';
import { REPO_ROOT, serverEnv } from './support/server-process.js';

/** CI fails here when an entity changes without a migration (or a migration without its entity). */
const databases: { url: string; drop: () => Promise<void> }[] = [];

async function database() {
  const db = await createTestDatabase();
  databases.push(db);
  return db;
}

beforeAll(async () => {
  await database();
});
afterAll(async () => {
  await Promise.all(databases.map((db) => db.drop()));
});

function migrateCheck(databaseUrl: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '--silent', 'migrate:check'], {
      cwd: REPO_ROOT,
      env: serverEnv({ DATABASE_URL: databaseUrl }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.once('exit', (code) => resolve({ code, output }));
  });
}

describe('migrations', () => {
  it('the migrated schema matches the entities exactly', async () => {
    const orm = await openOrm({ clientUrl: databases[0]!.url, entities: ENTITIES, poolMax: 2 });
    try {
      expect(await schemaDrift(orm)).toBe('');
    } finally {
      await orm.close();
    }
  });

  it('npm run migrate:check passes on a migrated database and fails on drift', async () => {
    const ok = await migrateCheck(databases[0]!.url);
    expect(ok.code, ok.output).toBe(0);
    expect(ok.output).toContain('entities and migrations agree');

    const drifted = await database();
    const client = new pg.Client({ connectionString: drifted.url });
    await client.connect();
    await client.query('ALTER TABLE server_nodes DROP COLUMN details');
    await client.end();
    const failed = await migrateCheck(drifted.url);
    expect(failed.code, failed.output).toBe(1);
    expect(failed.output).toContain('entities and migrations disagree');
    expect(failed.output).toContain('details');
  });
});
