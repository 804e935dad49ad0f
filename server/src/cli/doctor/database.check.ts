import fs from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../../config.js';
import { VERSION } from '../../version.js';
import { cliLogger, errorText } from '../cli-runtime.js';
import type { DoctorCheck, DoctorFinding } from '../doctor-check.js';

/**
 * The configured database: reachable (the running server's embedded cluster, or one started for
 * the check, or DATABASE_URL), its PostgreSQL version, migrations pending or unknown to this
 * version, and the clock: this machine's against the database server's (TOTP codes, heartbeats and
 * job schedules assume they agree).
 */

/** TOTP accepts codes one 30-second step off; beyond that logins fail. */
const CLOCK_FAIL_MS = 30_000;
const CLOCK_WARN_MS = 2_000;

async function knownMigrations(): Promise<Set<string>> {
  const { MIGRATIONS_DIR } = await import('../../platform/db/orm.js');
  const files = await fs.readdir(MIGRATIONS_DIR).catch(() => [] as string[]);
  return new Set(
    files.filter((f) => /\.(js|ts)$/.test(f) && !f.endsWith('.d.ts')).map((f) => path.parse(f).name),
  );
}

export function clockFinding(skewMs: number): DoctorFinding {
  const details = { skewMs: Math.round(skewMs) };
  const text = `this machine's clock is ${Math.abs(skewMs / 1000).toFixed(1)} s ${skewMs > 0 ? 'ahead of' : 'behind'} the database server's`;
  if (Math.abs(skewMs) > CLOCK_FAIL_MS)
    return {
      check: 'clock',
      status: 'fail',
      message: `${text}: two-factor codes and heartbeats fail; synchronise both with NTP`,
      details,
    };
  if (Math.abs(skewMs) > CLOCK_WARN_MS)
    return { check: 'clock', status: 'warn', message: `${text}; synchronise both with NTP`, details };
  return { check: 'clock', status: 'ok', message: text, details };
}

export const databaseCheck: DoctorCheck = {
  name: 'database',
  async run(config: Config) {
    const log = cliLogger({ ...config, logLevel: 'warn' });
    try {
      const { withCliOrm } = await import('../cli-database.js');
      return await withCliOrm(config, log, async (orm, database) => {
        const connection = orm.em.getConnection();
        const before = Date.now();
        const [row] = await connection.execute<{ now: Date; version: string }[]>(
          "SELECT now() AS now, current_setting('server_version') AS version",
        );
        const after = Date.now();
        const where = database.embedded
          ? 'embedded PostgreSQL'
          : `DATABASE_URL (${new URL(database.url).host})`;
        const findings: DoctorFinding[] = [
          {
            check: 'database',
            status: 'ok',
            message: `${where} reachable, PostgreSQL ${row!.version}, ${after - before} ms`,
            details: { embedded: database.embedded, version: row!.version, latencyMs: after - before },
          },
        ];
        const migrator = orm.getMigrator();
        const executed = (await migrator.getExecutedMigrations()).map((m) => m.name);
        const pending = (await migrator.getPendingMigrations()).map((m) => m.name);
        const known = await knownMigrations();
        const unknown = executed.filter((name) => !known.has(name));
        if (unknown.length) {
          findings.push({
            check: 'migrations',
            status: 'fail',
            message: `the database was migrated by a newer Stellwerk than ${VERSION} (${unknown.length} unknown migration(s), last ${unknown.at(-1)}); install that version or newer`,
            details: { unknown },
          });
        } else if (pending.length) {
          findings.push({
            check: 'migrations',
            status: 'warn',
            message: `${pending.length} migration(s) pending; the next start (or "stellwerk migrate") applies them`,
            details: { pending },
          });
        } else {
          findings.push({
            check: 'migrations',
            status: 'ok',
            message: `all ${executed.length} migrations applied`,
            details: { applied: executed.length, last: executed.at(-1) },
          });
        }
        // Against the middle of the round trip, so the query's own latency does not count as skew.
        findings.push(clockFinding((before + after) / 2 - new Date(row!.now).getTime()));
        return findings;
      });
    } catch (error) {
      return {
        check: 'database',
        status: 'fail',
        message: `the database cannot be reached: ${errorText(error).split('\n')[0]}`,
      };
    }
  },
};
