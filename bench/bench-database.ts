import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { EmbeddedDatabase } from '../server/src/platform/db/embedded-postgres.js';

/**
 * An embedded PostgreSQL of its own for one benchmark run, in a new temp folder named after the
 * bench (`stellwerk-bench-<name>-…`): the cluster in `<dir>/pg`, the folder for the bench's files.
 */
export async function startBenchDatabase(
  name: string,
): Promise<{ dir: string; url: string; embedded: EmbeddedDatabase }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), `stellwerk-bench-${name}-`));
  // As root the cluster runs as `postgres`, which must be able to enter the temp folder.
  await fs.chmod(dir, 0o755);
  const embedded = new EmbeddedDatabase({
    dataDir: path.join(dir, 'pg'),
    port: 0,
    database: 'stellwerk',
    log: pino({ level: 'warn' }),
  });
  return { dir, url: await embedded.start(), embedded };
}
