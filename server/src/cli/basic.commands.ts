import { configReport, settingsFileNote } from '../config-report.js';
import { VERSION } from '../version.js';
import { assertKnownOptions, cliConfig, flag } from './cli-runtime.js';
import type { CliCommand } from './command.js';

/** `stellwerk start`, `version` and `config`: the commands that need nothing but the configuration. */

export const startCommand: CliCommand = {
  name: 'start',
  summary: 'Run the server in the foreground (the same as npm start; the service runs this)',
  usage: [
    'Usage: stellwerk start',
    '',
    'Runs the Stellwerk server in this process until SIGTERM or SIGINT, as `npm start` does:',
    'configuration, embedded or external PostgreSQL, migrations, HTTP, broker and background work.',
    'Logs go to stdout: readable lines on a terminal, JSON otherwise (STELLWERK_LOG_FORMAT).',
  ].join('\n'),
  async run(args) {
    assertKnownOptions(args, {});
    // main.ts starts the server when loaded and exits the process itself on failure or shutdown.
    await import('../main.js');
    return new Promise<number>(() => {});
  },
};

export const versionCommand: CliCommand = {
  name: 'version',
  summary: 'Print the version of this installation',
  usage: 'Usage: stellwerk version\n\nPrints the version of the installed Stellwerk (as in /xapi/v1/health).',
  async run(args, io) {
    assertKnownOptions(args, {});
    io.out(VERSION);
    return 0;
  },
};

export const configCommand: CliCommand = {
  name: 'config',
  summary: 'Show each effective setting and where it came from (environment, stellwerk.conf, default)',
  usage: [
    'Usage: stellwerk config [--json]',
    '',
    'Prints every setting with its effective value and its source: the environment, the settings',
    'file <data dir>/stellwerk.conf, or the default. Secrets are masked. Exits 1 when the',
    'configuration is invalid, naming the variable (and the line of the file).',
  ].join('\n'),
  async run(args, io) {
    assertKnownOptions(args, { flags: ['json'] });
    const config = cliConfig(io);
    const rows = configReport(config);
    if (flag(args, 'json')) {
      io.out(
        JSON.stringify(
          {
            settingsFile: config.origin.settingsFile,
            found: config.origin.settingsFileFound,
            settings: rows,
          },
          null,
          2,
        ),
      );
      return 0;
    }
    io.out(`Settings file: ${settingsFileNote(config)}`);
    const width = Math.max(...rows.map((r) => r.name.length));
    for (const row of rows) io.out(`${row.name.padEnd(width)}  ${row.source.padEnd(7)}  ${row.value}`);
    return 0;
  },
};
