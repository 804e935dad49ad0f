import fs from 'node:fs';
import path from 'node:path';
import {
  backupArgs,
  cliInvocation,
  restoreArgs,
  runCli,
  type CliResult,
  type RunCliOptions,
} from './cli-runner.js';
import { CONF_FILE_NAME } from './conf-file.js';
import type { SpawnSpec } from './server-host.js';

/**
 * The menu's backup and restore, as steps around the `stellwerk` CLI (cli-runner.ts). Pure Node:
 * the dialogs live in main.ts, so the order of stopping, restoring and starting is tested here.
 */

const stamp = (date: Date) => date.toISOString().slice(0, 16).replace(/[-:]/g, '').replace('T', '-');

/** A default file name for "Back up now…", sortable by time. */
export const backupFileName = (date: Date): string => `stellwerk-backup-${stamp(date)}.tar.gz`;

/**
 * Restore goes into a new folder beside the current data directory, which stays as it was: the
 * CLI restores only into an empty or new directory, and a failed or unwanted restore leaves
 * the previous data untouched.
 */
export const restoreTarget = (dataDir: string, date: Date): string =>
  path.join(path.dirname(dataDir), `${path.basename(dataDir)}-restored-${stamp(date)}`);

export function backUp(server: SpawnSpec, file: string, options?: RunCliOptions): Promise<CliResult> {
  return runCli(cliInvocation(server, backupArgs(file)), options);
}

export interface RestoreSteps {
  /** The server spawn spec; its STELLWERK_DATA_DIR is replaced by the target. */
  server: SpawnSpec;
  archive: string;
  currentDataDir: string;
  target: string;
  /** Stops the server the app runs; the CLI must not restore under a running server (same ports, same files). */
  stopServer: () => Promise<void>;
  /** Starts the server again, on the restored directory after a success, else on the current one. */
  startServer: (dataDir: string) => Promise<void>;
  /** Makes the restored directory the app's data directory (data-dir.ts). */
  useDataDir: (dataDir: string) => void;
  cli?: RunCliOptions;
}

export interface RestoreOutcome {
  ok: boolean;
  message: string;
  /** The data directory the server runs on afterwards. */
  dataDir: string;
  /** Set when the server did not start again. */
  startError?: string;
}

export async function restoreFlow(steps: RestoreSteps): Promise<RestoreOutcome> {
  await steps.stopServer();
  const spec = { ...steps.server, env: { ...steps.server.env, STELLWERK_DATA_DIR: steps.target } };
  const result = await runCli(cliInvocation(spec, restoreArgs(steps.archive)), steps.cli);
  let dataDir = steps.currentDataDir;
  if (result.ok) {
    // The archive holds the data, not the settings: keep ports and HTTPS as they were.
    const conf = path.join(steps.currentDataDir, CONF_FILE_NAME);
    const restoredConf = path.join(steps.target, CONF_FILE_NAME);
    if (fs.existsSync(conf) && !fs.existsSync(restoredConf)) fs.copyFileSync(conf, restoredConf);
    steps.useDataDir(steps.target);
    dataDir = steps.target;
  } else {
    // The folder was new: whatever a failed restore left there is of no use.
    fs.rmSync(steps.target, { recursive: true, force: true });
  }
  let startError: string | undefined;
  try {
    await steps.startServer(dataDir);
  } catch (error) {
    startError = error instanceof Error ? error.message : String(error);
  }
  return { ok: result.ok, message: result.message, dataDir, ...(startError ? { startError } : {}) };
}
