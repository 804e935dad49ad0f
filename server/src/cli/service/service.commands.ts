import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { SERVER_NODE_FLAGS } from '../../platform/node-flags.js';
import { assertKnownOptions, cliConfig, option } from '../cli-runtime.js';
import { CliError, type CliCommand, type CliIo } from '../command.js';
import { readUnitTemplate, systemdUnit, UNIT_NAME, winswConfig } from './systemd-unit.js';

/**
 * `stellwerk service install|uninstall|status`: the systemd unit on Linux. `systemctl` is called
 * only when systemd runs (`/run/systemd/system` exists, as sd_booted(3) checks); otherwise the
 * command writes or removes the file and says what is left to do. Windows: see winswConfig.
 */

const run = promisify(execFile);
const DEFAULT_UNIT_DIR = '/etc/systemd/system';
const INSTALLED_LAUNCHER = '/usr/bin/stellwerk';

export const systemdRunning = (): boolean => existsSync('/run/systemd/system');

/** The installed launcher, else this Node with the server's flags running this file (a tarball or a checkout's build). */
function defaultExecStart(): string {
  if (existsSync(INSTALLED_LAUNCHER)) return `${INSTALLED_LAUNCHER} start`;
  const entry = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'stellwerk.js');
  return `${process.execPath} ${SERVER_NODE_FLAGS.join(' ')} ${entry} start`;
}

async function systemctl(io: CliIo, ...args: string[]): Promise<string> {
  try {
    const { stdout } = await run('systemctl', args);
    return stdout.trim();
  } catch (error) {
    const failure = error as { stderr?: string; stdout?: string; message: string };
    if (args[0] === 'is-active') return (failure.stdout ?? '').trim() || 'unknown';
    io.err((failure.stderr ?? '').trim());
    throw new CliError(`systemctl ${args.join(' ')} failed`);
  }
}

function requireLinux(): void {
  if (process.platform === 'win32') {
    throw new CliError(
      'on Windows, install the service with WinSW as docs/operations.md describes ("stellwerk service install --print-winsw" prints its file)',
    );
  }
  if (process.platform !== 'linux')
    throw new CliError(
      `no service support on ${process.platform}; run "stellwerk start" under your service manager`,
    );
}

const UNIT_DIR_HELP = `  --unit-dir DIR   where the unit file goes (default ${DEFAULT_UNIT_DIR})`;

export function serviceCommands(): CliCommand[] {
  const install: CliCommand = {
    name: 'service install',
    summary: 'Register Stellwerk as a systemd service (enabled and started when systemd runs)',
    usage: [
      'Usage: stellwerk service install [--user NAME] [--exec COMMAND] [--unit-dir DIR] [--print-winsw]',
      '',
      `Writes ${UNIT_NAME}, which runs "stellwerk start" with this STELLWERK_DATA_DIR. When systemd`,
      'runs, also reloads it and enables and starts the service; otherwise says how to start it.',
      '',
      '  --user NAME      the user the server runs as (default stellwerk); it must own the data directory',
      `  --exec COMMAND   the start command line (default ${INSTALLED_LAUNCHER} start when installed)`,
      UNIT_DIR_HELP,
      '  --print-winsw    print the WinSW service file for Windows and exit',
    ].join('\n'),
    async run(args, io) {
      assertKnownOptions(args, { values: ['user', 'exec', 'unit-dir'], flags: ['print-winsw'] });
      const config = cliConfig(io);
      if (args.includes('--print-winsw')) {
        io.out(
          winswConfig({
            stellwerkCmd: option(args, 'exec') ?? 'C:\\Program Files\\Stellwerk\\stellwerk.cmd',
            dataDir: config.dataDir,
          }),
        );
        return 0;
      }
      requireLinux();
      const unitDir = option(args, 'unit-dir') ?? DEFAULT_UNIT_DIR;
      const file = path.join(unitDir, UNIT_NAME);
      const user = option(args, 'user') ?? 'stellwerk';
      const unit = systemdUnit(readUnitTemplate(), {
        execStart: option(args, 'exec') ?? defaultExecStart(),
        user,
        dataDir: config.dataDir,
      });
      try {
        await fs.mkdir(unitDir, { recursive: true });
        await fs.writeFile(file, unit, { mode: 0o644 });
      } catch (error) {
        throw new CliError(
          `cannot write ${file} (${(error as NodeJS.ErrnoException).code ?? String(error)}); run as root`,
        );
      }
      io.out(`wrote ${file}`);
      if (!systemdRunning()) {
        io.out(
          `systemd is not running on this machine: nothing enabled. Start the server with "stellwerk start" as user ${user}, or enable the unit where systemd runs: systemctl enable --now stellwerk`,
        );
        return 0;
      }
      await systemctl(io, 'daemon-reload');
      await systemctl(io, 'enable', '--now', UNIT_NAME);
      io.out(`enabled and started ${UNIT_NAME}; follow its log with: journalctl -u stellwerk -f`);
      return 0;
    },
  };

  const uninstall: CliCommand = {
    name: 'service uninstall',
    summary: 'Stop and remove the systemd service (the data stays)',
    usage: [
      'Usage: stellwerk service uninstall [--unit-dir DIR]',
      '',
      `Stops and disables ${UNIT_NAME} when systemd runs, then deletes the unit file. The data directory is kept.`,
      '',
      UNIT_DIR_HELP,
    ].join('\n'),
    async run(args, io) {
      assertKnownOptions(args, { values: ['unit-dir'] });
      requireLinux();
      const file = path.join(option(args, 'unit-dir') ?? DEFAULT_UNIT_DIR, UNIT_NAME);
      if (systemdRunning()) await systemctl(io, 'disable', '--now', UNIT_NAME);
      try {
        await fs.rm(file);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') throw new CliError(`${file} does not exist: the service is not installed`);
        throw new CliError(`cannot remove ${file} (${code ?? String(error)}); run as root`);
      }
      if (systemdRunning()) await systemctl(io, 'daemon-reload');
      io.out(`removed ${file}; the data directory is kept`);
      return 0;
    },
  };

  const status: CliCommand = {
    name: 'service status',
    summary: 'Show whether the systemd service is installed and running',
    usage: [
      'Usage: stellwerk service status [--unit-dir DIR]',
      '',
      'Exits 0 when the unit is installed (and, with systemd, active); 1 otherwise.',
      '',
      UNIT_DIR_HELP,
    ].join('\n'),
    async run(args, io) {
      assertKnownOptions(args, { values: ['unit-dir'] });
      requireLinux();
      const file = path.join(option(args, 'unit-dir') ?? DEFAULT_UNIT_DIR, UNIT_NAME);
      const installed = existsSync(file);
      io.out(installed ? `unit: ${file}` : `unit: not installed (${file} does not exist)`);
      if (!systemdRunning()) {
        io.out('systemd: not running on this machine');
        return installed ? 0 : 1;
      }
      const active = await systemctl(io, 'is-active', UNIT_NAME);
      io.out(`state: ${active}`);
      return installed && active === 'active' ? 0 : 1;
    },
  };
  return [install, uninstall, status];
}
