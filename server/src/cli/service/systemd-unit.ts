import { readFileSync } from 'node:fs';

/**
 * The systemd unit `stellwerk service install` writes: the package's own unit
 * (installers/linux/stellwerk.service, one source for both), with this installation's start
 * command, user and data directory put in.
 */
export interface UnitOptions {
  /** The command line that starts the server, e.g. `/usr/bin/stellwerk start`. */
  execStart: string;
  user: string;
  dataDir: string;
}

export const UNIT_NAME = 'stellwerk.service';

/** Beside the sources (four levels up) or the build (five: dist/server/src/cli/service). */
export function readUnitTemplate(): string {
  for (const relative of ['../../../../installers/linux/', '../../../../../installers/linux/']) {
    try {
      return readFileSync(new URL(relative + UNIT_NAME, import.meta.url), 'utf8');
    } catch {
      // try the next location
    }
  }
  throw new Error(`the unit template installers/linux/${UNIT_NAME} is missing from this installation`);
}

export function systemdUnit(template: string, options: UnitOptions): string {
  const dataDir = quoteValue(options.dataDir);
  let unit = template
    .replace(/^User=.*$/m, `User=${options.user}`)
    .replace(/^Group=.*$/m, `Group=${options.user}`)
    .replace(/^Environment=STELLWERK_DATA_DIR=.*$/m, `Environment=STELLWERK_DATA_DIR=${dataDir}`)
    .replace(/^ExecStart=.*$/m, `ExecStart=${options.execStart}`);
  // StateDirectory covers /var/lib/stellwerk only; ProtectSystem=strict makes everything else read-only.
  if (options.dataDir !== '/var/lib/stellwerk') {
    unit = unit.replace(/^(StateDirectoryMode=.*)$/m, `$1\nReadWritePaths=${dataDir}`);
  }
  return unit;
}

/**
 * The Windows service, through WinSW (a service wrapper: Node itself does not answer the Service
 * Control Manager). `stellwerk service install` on Windows prints this file and the steps in
 * docs/operations.md; it is type-checked here and not run in CI.
 */
export function winswConfig(options: { stellwerkCmd: string; dataDir: string }): string {
  const escape = (text: string) =>
    text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
  return [
    '<service>',
    '  <id>Stellwerk</id>',
    '  <name>Stellwerk</name>',
    '  <description>Stellwerk IoT and digital-twin server</description>',
    `  <executable>${escape(options.stellwerkCmd)}</executable>`,
    '  <arguments>start</arguments>',
    `  <env name="STELLWERK_DATA_DIR" value="${escape(options.dataDir)}"/>`,
    '  <startmode>Automatic</startmode>',
    '  <onfailure action="restart" delay="5 sec"/>',
    '  <stoptimeout>60 sec</stoptimeout>',
    '  <log mode="roll-by-size"/>',
    '</service>',
    '',
  ].join('\n');
}

/** systemd's quoting for a value with spaces; plain otherwise. */
function quoteValue(value: string): string {
  return /[\s"\\]/.test(value) ? `"${value.replace(/["\\]/g, '\\$&')}"` : value;
}
