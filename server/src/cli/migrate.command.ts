import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { assertKnownOptions, cliConfig, cliLogger } from './cli-runtime.js';
import { CliError, type CliCommand } from './command.js';

/** Called with the pending migrations before `stellwerk migrate up` applies them (a backup first). */
export type BeforeMigrate = (
  pending: string[],
  context: { config: Config; log: Logger; databaseUrl: string },
) => Promise<void>;

/**
 * `stellwerk migrate [up|status]`: applies pending migrations under the same advisory lock a
 * starting server takes, so it is safe while nodes run; `status` lists them and exits 1 when some
 * are pending. `beforeMigrate` runs only when there is something to apply.
 */
export function migrateCommand(options: { beforeMigrate?: BeforeMigrate } = {}): CliCommand {
  return {
    name: 'migrate',
    summary: 'Apply pending database migrations (or list them with "status")',
    usage: [
      'Usage: stellwerk migrate [up|status]',
      '',
      '  up      (default) apply pending migrations to the configured database; the server does',
      '          this itself on start, so this is for upgrades done by hand',
      '  status  list pending migrations; exit 1 when there are some (also: check)',
      '',
      'Works with the server running or stopped (embedded PostgreSQL or DATABASE_URL).',
    ].join('\n'),
    async run(args, io) {
      const [given = 'up', ...rest] = args;
      // `check`, as in `npm run migrate:check`, reads as the same question.
      const action = given === 'check' ? 'status' : given;
      if (action !== 'up' && action !== 'status')
        throw new CliError(`unknown action "${given}"; use up or status`, 2);
      assertKnownOptions(rest, {});
      const config = cliConfig(io);
      const log = cliLogger(config);
      const { withCliOrm } = await import('./cli-database.js');
      const { MIGRATION_LOCK, withAdvisoryLock } = await import('../platform/db/advisory-lock.js');
      const { migrateUp } = await import('../platform/db/orm.js');
      return withCliOrm(config, log, async (orm, database) => {
        const pending = (await orm.getMigrator().getPendingMigrations()).map((m) => m.name);
        if (action === 'status') {
          const executed = await orm.getMigrator().getExecutedMigrations();
          io.out(`applied: ${executed.length}, last: ${executed.at(-1)?.name ?? 'none'}`);
          io.out(pending.length ? `pending: ${pending.join(', ')}` : 'pending: none');
          return pending.length ? 1 : 0;
        }
        if (!pending.length) {
          io.out('the database is up to date');
          return 0;
        }
        const applied = await withAdvisoryLock(database.url, MIGRATION_LOCK, async () => {
          await options.beforeMigrate?.(pending, { config, log, databaseUrl: database.url });
          return migrateUp(orm);
        });
        log.info({ applied }, 'migrations applied');
        io.out(`applied ${applied.length} migration(s): ${applied.join(', ')}`);
        return 0;
      });
    },
  };
}
