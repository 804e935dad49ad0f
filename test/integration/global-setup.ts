import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import pino from 'pino';
import type { TestProject } from 'vitest/node';
import { ENTITIES } from '../../server/src/entities.js';
import { EmbeddedDatabase } from '../../server/src/platform/db/embedded-postgres.js';
import { migrateUp, openOrm } from '../../server/src/platform/db/orm.js';

export const TEMPLATE_DB = 'stellwerk_test_template';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Admin connection URL of the test cluster (database `postgres`). */
    pgAdminUrl: string;
  }
}

/**
 * One PostgreSQL for the whole run: the embedded one in a temp folder, or TEST_DATABASE_URL.
 * Migrations run once into a template; each test file clones it (CREATE DATABASE … TEMPLATE).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const log = pino({ level: 'warn' });
  let embedded: EmbeddedDatabase | undefined;
  let dataDir: string | undefined;
  let adminUrl: string;
  if (process.env.TEST_DATABASE_URL) {
    adminUrl = process.env.TEST_DATABASE_URL;
  } else {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'stellwerk-test-'));
    await fs.chmod(dataDir, 0o755);
    embedded = new EmbeddedDatabase({ dataDir, port: 0, database: 'postgres', log });
    adminUrl = await embedded.start();
  }

  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${TEMPLATE_DB} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${TEMPLATE_DB}`);
  const templateUrl = withDatabase(adminUrl, TEMPLATE_DB);
  const orm = await openOrm({ clientUrl: templateUrl, entities: ENTITIES });
  await migrateUp(orm);
  await orm.close();
  await admin.end();

  project.provide('pgAdminUrl', adminUrl);
  return async () => {
    await embedded?.stop();
    if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
  };
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}
