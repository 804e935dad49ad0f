import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { assertKnownOptions, cliConfig, cliLogger } from './cli-runtime.js';
import { CliError, type CliCommand } from './command.js';

/** What the upgrade hooks around `stellwerk migrate up` get to see. */
export interface MigrateContext {
  config: Config;
  log: Logger;
  databaseUrl: string;
  embeddedDatabase: boolean;
}

/** Called with the pending migrations before `stellwerk migrate up` applies them (a backup first). */
export type BeforeMigrate = (pending: string[], context: MigrateContext) => Promise<void>;

/** Called after `stellwerk migrate up` applied them (the database records the version). */
export type AfterMigrate = (context: MigrateContext) => Promise<void>;

/**
 * `stellwerk migrate [up|status]`: applies pending migrations under the same advisory lock a
 * starting server takes, so it is safe while nodes run; `status` lists them and exits 1 when some
 * are pending. `beforeMigrate` runs only when there is something to apply.
 */
export function migrateCommand(
  options: { beforeMigrate?: BeforeMigrate; afterMigrate?: AfterMigrate } = {},
): CliCommand {
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
        const context = { config, log, databaseUrl: database.url, embeddedDatabase: database.embedded };
        const applied = await withAdvisoryLock(database.url, MIGRATION_LOCK, async () => {
          await options.beforeMigrate?.(pending, context);
          const names = await migrateUp(orm);
          await options.afterMigrate?.(context);
          return names;
        });
        log.info({ applied }, 'migrations applied');
        io.out(`applied ${applied.length} migration(s): ${applied.join(', ')}`);
        return 0;
      });
    },
  };
}
