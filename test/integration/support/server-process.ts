import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVER_NODE_FLAGS } from '../../../server/src/platform/node-flags.js';

/** The repository root; servers run from the sources through tsx, so no build step is needed. */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ServerProcess {
  child: ChildProcess;
  pid: number;
  httpPort: number;
  baseUrl: string;
  /** Everything the process wrote so far (stdout and stderr interleaved). */
  output(): string;
  exited: Promise<Exit>;
  /** Sends `signal` and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<Exit>;
}

/**
 * Environment for a spawned server: the test's own environment minus every Stellwerk variable (a
 * developer's shell must not leak in), plus `env`. Logs at info, so the ready line appears.
 */
export function serverEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(
      ([key]) => !key.startsWith('STELLWERK_') && key !== 'DATABASE_URL' && key !== 'NODE_OPTIONS',
    ),
  );
  return {
    ...base,
    STELLWERK_LOG_LEVEL: 'info',
    STELLWERK_HTTP_HOST: '127.0.0.1',
    STELLWERK_HTTP_PORT: '0',
    // The embedded broker too: never 1883, which parallel test files (or a real broker) would share.
    STELLWERK_MQTT_HOST: '127.0.0.1',
    STELLWERK_MQTT_PORT: '0',
    ...env,
  };
}

const running = new Set<ChildProcess>();

/** For afterAll: SIGKILLs every server this file spawned that is still running. */
export function killSpawnedServers(): void {
  for (const child of running) child.kill('SIGKILL');
}

export interface SpawnOptions {
  /** Open-file limits to start the server with (set by `sh` with `ulimit`, which then execs node). */
  openFiles?: { soft: number; hard: number };
}

/** Spawns `node --import tsx server/src/main.ts`: one process, so signals reach the server itself. */
export function spawnServer(
  env: Record<string, string>,
  options: SpawnOptions = {},
): {
  child: ChildProcess;
  output: () => string;
  exited: Promise<Exit>;
} {
  // The bench passes e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile the server under load, or
  // `--import ./bench/stall-probe.ts` (after tsx's own --import, so TypeScript loads).
  const extra = process.env.BENCH_SERVER_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const args = [...SERVER_NODE_FLAGS, '--import', 'tsx', ...extra, 'server/src/main.ts'];
  const { openFiles } = options;
  // `exec` replaces the shell: the child's pid is the server's, and signals reach it.
  const [command, commandArgs] = openFiles
    ? [
        '/bin/sh',
        [
          '-c',
          `ulimit -n ${openFiles.hard} && ulimit -S -n ${openFiles.soft} && exec "$0" "$@"`,
          process.execPath,
          ...args,
        ],
      ]
    : [process.execPath, args];
  const child = spawn(command, commandArgs, {
    cwd: REPO_ROOT,
    env: serverEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
  running.add(child);
  const exited = new Promise<Exit>((resolve) =>
    child.once('exit', (code, signal) => {
      running.delete(child);
      resolve({ code, signal });
    }),
  );
  return { child, output: () => text, exited };
}

/** Starts a server and resolves once it logged "Stellwerk is ready" (JSON line with `httpPort`). */
export async function startServer(
  env: Record<string, string>,
  timeoutMs = 60_000,
  options: SpawnOptions = {},
): Promise<ServerProcess> {
  const { child, output, exited } = spawnServer(env, options);
  const deadline = Date.now() + timeoutMs;
  let exit: Exit | undefined;
  void exited.then((e) => (exit = e));
  // One more look after the deadline, once pending output has been read: a synchronous console build
  // in the same test process can hold this loop past the deadline while the server was long ready.
  for (let lastLook = false; ;) {
    const port = readyPort(output());
    if (port !== undefined) {
      return {
        child,
        pid: child.pid!,
        httpPort: port,
        baseUrl: `http://127.0.0.1:${port}`,
        output,
        exited,
        stop: (signal = 'SIGTERM') => {
          if (exit === undefined) child.kill(signal);
          return exited;
        },
      };
    }
    if (exit) throw new Error(`server exited (${JSON.stringify(exit)}) before it was ready:\n${output()}`);
    if (Date.now() >= deadline) {
      if (lastLook) break;
      lastLook = true;
    }
    await sleep(50);
  }
  child.kill('SIGKILL');
  throw new Error(`server not ready within ${timeoutMs} ms:\n${output()}`);
}

function readyPort(text: string): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.includes('Stellwerk is ready')) continue;
    const parsed = JSON.parse(line) as { httpPort?: number };
    if (typeof parsed.httpPort === 'number') return parsed.httpPort;
  }
  return undefined;
}

/** Runs a server that is expected to fail; resolves with its exit, output and run time. */
export async function runFailingServer(
  env: Record<string, string>,
  timeoutMs = 30_000,
): Promise<Exit & { output: string; durationMs: number }> {
  const began = Date.now();
  const { child, output, exited } = spawnServer(env);
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const exit = await exited;
  clearTimeout(timer);
  return { ...exit, output: output(), durationMs: Date.now() - began };
}

/** A temp folder the embedded PostgreSQL (run as `postgres` when the tests run as root) can enter. */
export async function tempDataDir(prefix: string): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), prefix));
  await fs.chmod(dir, 0o755);
  return dir;
}

/** Pids of processes whose command line mentions `text` (Linux /proc), e.g. a data directory. */
export async function processesMentioning(text: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await fs.readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.replaceAll('\0', ' ').includes(text)) pids.push(Number(entry));
  }
  return pids;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Resolves true once `connect` to the port is refused. */
export function portClosed(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
