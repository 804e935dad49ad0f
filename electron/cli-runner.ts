import { spawn } from 'node:child_process';
import path from 'node:path';
import type { SpawnSpec } from './server-host.js';

/**
 * Runs the `stellwerk` command line (dist/server/src/cli/stellwerk.js) as a child process for
 * the menu's "Back up now…" and "Restore…": the same code an admin runs in a terminal, with the
 * same environment as the server the desktop starts, so both agree on the data directory,
 * ports and database. The CLI prints a one-line reason and exits non-zero on failure; this
 * module turns that into a result the shell can show. Pure Node, no Electron.
 */

export interface CliInvocation {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
}

export const CLI_ENTRY = path.join('dist', 'server', 'src', 'cli', 'stellwerk.js');

export interface CliRuntime {
  /**
   * Run the CLI with Electron's own binary in Node mode (ELECTRON_RUN_AS_NODE) instead of the
   * server's Node runtime; for a shell shipped without a separate Node.
   */
  electronExecPath?: string;
}

/**
 * The CLI with `cliArgs`, started like the server in `server` (its Node, flags, environment and
 * working directory); only the entry file and the arguments differ.
 */
export function cliInvocation(server: SpawnSpec, cliArgs: string[], runtime: CliRuntime = {}): CliInvocation {
  // The server's args are Node flags followed by its entry file: keep the flags, swap the file.
  const nodeFlags = server.args.filter((arg) => arg.startsWith('--'));
  const entry = path.join(server.cwd, CLI_ENTRY);
  if (runtime.electronExecPath)
    return {
      command: runtime.electronExecPath,
      args: [entry, ...cliArgs],
      env: { ...server.env, ELECTRON_RUN_AS_NODE: '1' },
      cwd: server.cwd,
    };
  return {
    command: server.command,
    args: [...nodeFlags, entry, ...cliArgs],
    env: { ...server.env },
    cwd: server.cwd,
  };
}

export interface CliResult {
  ok: boolean;
  /** The exit code; null when the process was killed (timeout) or never started. */
  exitCode: number | null;
  /** One line for a dialog: the CLI's last line on stderr on failure, on stdout on success. */
  message: string;
  /** All output, for the desktop log. */
  output: string[];
}

export interface RunCliOptions {
  /** A backup of a large database takes a while; a hung process is killed after this. */
  timeoutMs?: number;
  onOutput?: (line: string) => void;
}

const lastLine = (lines: string[]): string | undefined =>
  lines
    .filter((l) => l.trim() !== '')
    .at(-1)
    ?.trim();

/** Runs the invocation to its end; never rejects, a failure is a result with `ok: false`. */
export function runCli(invocation: CliInvocation, options: RunCliOptions = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    const stdout: string[] = [];
    const stderr: string[] = [];
    const output: string[] = [];
    const child = spawn(invocation.command, invocation.args, {
      cwd: invocation.cwd,
      env: invocation.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const collect = (into: string[]) => (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split(/\r?\n/)) {
        if (line.trim() === '') continue;
        into.push(line);
        output.push(line);
        options.onOutput?.(line);
      }
    };
    child.stdout.on('data', collect(stdout));
    child.stderr.on('data', collect(stderr));
    let timedOut = false;
    const timeoutMs = options.timeoutMs ?? 30 * 60_000;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      resolve({
        ok: false,
        exitCode: null,
        message: `stellwerk could not be started: ${error.message}`,
        output,
      });
    });
    // 'close' waits for the output streams, so the last line is in.
    child.once('close', (code) => {
      clearTimeout(timer);
      if (timedOut) {
        resolve({
          ok: false,
          exitCode: null,
          message: `stellwerk did not finish within ${timeoutMs} ms`,
          output,
        });
        return;
      }
      if (code === 0) {
        resolve({ ok: true, exitCode: 0, message: lastLine(stdout) ?? 'done', output });
        return;
      }
      const reason = lastLine(stderr) ?? lastLine(stdout) ?? 'no reason given';
      resolve({ ok: false, exitCode: code, message: reason, output });
    });
  });
}

/** `stellwerk backup --out FILE`. */
export const backupArgs = (file: string): string[] => ['backup', '--out', file];

/** `stellwerk restore FILE`. */
export const restoreArgs = (file: string): string[] => ['restore', file];
