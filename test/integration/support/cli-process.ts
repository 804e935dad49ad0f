import { spawn } from 'node:child_process';
import { REPO_ROOT, serverEnv } from './server-process.js';

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliRunOptions {
  /** Written to the command's stdin, which is then closed. */
  stdin?: string;
  /** Run as this user through setpriv (the tests run as root, and root may write anywhere). */
  asUser?: { user: string; group: string };
  timeoutMs?: number;
}

/**
 * Runs the real `stellwerk` command (server/src/cli/stellwerk.ts through tsx) as a child process
 * with the test's environment minus every Stellwerk variable, plus `env`.
 */
export function runStellwerk(
  args: string[],
  env: Record<string, string>,
  options: CliRunOptions = {},
): Promise<CliRun> {
  const node = [process.execPath, '--import', 'tsx', 'server/src/cli/stellwerk.ts', ...args];
  const [command, ...commandArgs] = options.asUser
    ? [
        'setpriv',
        `--reuid=${options.asUser.user}`,
        `--regid=${options.asUser.group}`,
        '--clear-groups',
        ...node,
      ]
    : node;
  const child = spawn(command!, commandArgs, {
    cwd: REPO_ROOT,
    env: serverEnv({ ...(options.asUser ? { HOME: '/tmp' } : {}), ...env }),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(options.stdin ?? '');
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 45_000);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The JSON log lines a command wrote (its log goes to stderr; JSON, since stderr is a pipe). */
export function jsonLines(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}
