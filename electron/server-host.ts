import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { getWithPinnedCertificate, serverCertificateFile, serverHttpsMode } from './server-https.js';

/**
 * Attach-or-start: the desktop app uses a Stellwerk that already runs (a service on this
 * machine, or `npm start`), found by its health URL; otherwise it starts the server as a child
 * process and stops it again on quit. The server never runs inside Electron's own process.
 * Pure Node, no Electron: unit-tested with real HTTP servers and real child processes.
 */

export interface SpawnSpec {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
}

export interface DesktopSettings {
  /** Base URL of the Stellwerk the window shows, without a trailing slash. */
  url: string;
  /** How to start the server when nothing answers at `url`; undefined for a remote URL. */
  spawn: SpawnSpec | undefined;
  /**
   * With HTTPS: the certificate file the server the app starts serves. The health probe and the
   * window trust that certificate alone for `url`; undefined for HTTP and remote servers.
   */
  certFile: string | undefined;
}

export interface DesktopEnvironment {
  env: NodeJS.ProcessEnv;
  isPackaged: boolean;
  /** Electron's `process.resourcesPath` (packaged) and `app.getAppPath()` (the repository in development). */
  resourcesPath: string;
  appPath: string;
  platform: NodeJS.Platform;
  /** The data directory for a server the app starts (see data-dir.ts); unset: the server's own default. */
  dataDir?: string;
  /** That directory's stellwerk.conf; the environment wins over it, as in the server. */
  conf?: Record<string, string>;
}

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** As server/src/platform/node-flags.ts (the desktop build does not compile server sources). */
export const SERVER_NODE_FLAGS = ['--max-semi-space-size=64', '--v8-pool-size=0'];

/**
 * Where the server is and how to start it. `STELLWERK_URL` points the app at another machine
 * (then nothing is started); otherwise it is this machine's `STELLWERK_HTTP_PORT` (environment,
 * then stellwerk.conf, default 8080). A server the app starts listens on loopback only unless
 * STELLWERK_HTTP_HOST says otherwise: a desktop session should not open a port to the network
 * by surprise.
 */

export function desktopSettings(d: DesktopEnvironment): DesktopSettings {
  const setting = (name: string) => d.env[name]?.trim() || d.conf?.[name]?.trim() || undefined;
  const port = setting('STELLWERK_HTTP_PORT') ?? '8080';
  const conf = d.conf ?? {};
  const httpsMode = serverHttpsMode(d.env, conf);
  // An unknown mode stops the server at start; its own message says why, so plain HTTP here.
  const scheme = httpsMode === 'on' || httpsMode === 'self-signed' ? 'https' : 'http';
  // 127.0.0.1 rather than localhost even with HTTPS: Chromium keeps no HSTS for an IP address, so
  // switching HTTPS off again is not refused by a remembered Strict-Transport-Security.
  const url = (d.env.STELLWERK_URL?.trim() || `${scheme}://127.0.0.1:${port}`).replace(/\/+$/, '');
  if (!LOCAL_HOSTS.has(new URL(url).hostname)) return { url, spawn: undefined, certFile: undefined };

  const exe = d.platform === 'win32' ? 'node.exe' : 'node';
  // Packaged: the Node 24 runtime and the server build ship as resources. In development the
  // app runs through npm, so `node` on the PATH is the pinned Node 24 from node_modules/.bin.
  const root = d.isPackaged ? path.join(d.resourcesPath, 'app') : d.appPath;
  const command = d.isPackaged
    ? path.join(d.resourcesPath, 'node', 'bin', exe)
    : (d.env.STELLWERK_NODE ?? 'node');
  const serverDataDir = d.env.STELLWERK_DATA_DIR ?? d.dataDir;
  const certFile = url.startsWith('https:')
    ? serverCertificateFile({ mode: httpsMode, env: d.env, conf, dataDir: serverDataDir, cwd: root })
    : undefined;
  return {
    url,
    certFile,
    spawn: {
      command,
      args: [...SERVER_NODE_FLAGS, path.join(root, 'dist', 'server', 'src', 'main.js')],
      cwd: root,
      // The values the app itself relies on (where to probe, what to show) are passed explicitly;
      // the server reads the rest of stellwerk.conf itself.
      env: {
        ...d.env,
        ...(serverDataDir !== undefined ? { STELLWERK_DATA_DIR: serverDataDir } : {}),
        STELLWERK_HTTP_PORT: port,
        STELLWERK_HTTP_HOST: setting('STELLWERK_HTTP_HOST') ?? '127.0.0.1',
        STELLWERK_PUBLIC_URL: setting('STELLWERK_PUBLIC_URL') ?? `${scheme}://localhost:${port}`,
      },
    },
  };
}

/**
 * True when `{url}/health` answers 200 with Stellwerk's `{"status":"ok"}` within the timeout.
 * With `certFile` (DesktopSettings.certFile) an HTTPS answer counts only from that certificate.
 */
export async function probeHealth(url: string, timeoutMs = 1000, certFile?: string): Promise<boolean> {
  try {
    const answer = await getWithPinnedCertificate(`${url}/health`, timeoutMs, certFile);
    if (answer.status !== 200) return false;
    const body = JSON.parse(answer.body) as { status?: unknown } | null;
    return body?.status === 'ok';
  } catch {
    return false;
  }
}

export interface WaitOptions {
  timeoutMs: number;
  intervalMs?: number;
  /** Stops waiting early, e.g. when the child process has exited. */
  abandon?: () => string | undefined;
  /** The certificate to trust for an HTTPS url (see probeHealth). */
  certFile?: string;
}

/** Polls the health URL until it answers; rejects after the timeout or when `abandon` gives a reason. */
export async function waitForHealth(url: string, options: WaitOptions): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  const interval = options.intervalMs ?? 250;
  for (;;) {
    const reason = options.abandon?.();
    if (reason) throw new Error(reason);
    if (await probeHealth(url, Math.min(1000, interval * 4), options.certFile)) return;
    if (Date.now() >= deadline)
      throw new Error(`Stellwerk did not answer on ${url}/health within ${options.timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}

export type ServerHealth = 'running' | 'not-answering';

/**
 * Polls the health URL and reports each change (the first poll always reports), for the tray's
 * status: a service that went down, or came back, shows without opening the window. Returns stop.
 */
export function watchHealth(
  url: string,
  onChange: (health: ServerHealth) => void,
  intervalMs = 5000,
  certFile?: string,
): () => void {
  let last: ServerHealth | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const poll = async () => {
    // A busy server gets 2 s to answer whatever the interval: a slow answer is not a dead server.
    const health: ServerHealth = (await probeHealth(url, 2000, certFile)) ? 'running' : 'not-answering';
    if (stopped) return;
    if (health !== last) onChange((last = health));
    timer = setTimeout(() => void poll(), intervalMs);
  };
  void poll();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

export interface ServerHandle {
  url: string;
  /** `attached`: someone else runs the server and keeps it running after the app quits. */
  mode: 'attached' | 'started';
  /** The server process this app started; undefined when attached. */
  pid: number | undefined;
  /** The certificate trusted for an HTTPS url (DesktopSettings.certFile). */
  certFile: string | undefined;
  /** Stops a server this app started (SIGTERM, then SIGKILL after the grace time); no-op when attached. */
  stop(): Promise<void>;
}

export interface AttachOrStartOptions {
  settings: DesktopSettings;
  /** First start initialises the database: allow generously. */
  startTimeoutMs?: number;
  stopGraceMs?: number;
  onOutput?: (line: string) => void;
}

export async function attachOrStart(options: AttachOrStartOptions): Promise<ServerHandle> {
  const { url, spawn: spec, certFile } = options.settings;
  if (await probeHealth(url, 1000, certFile))
    return { url, mode: 'attached', pid: undefined, certFile, stop: async () => {} };
  if (!spec)
    throw new Error(`Stellwerk at ${url} does not answer, and a remote server cannot be started from here`);

  const child = spawn(spec.command, spec.args, {
    cwd: spec.cwd,
    env: spec.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const tail: string[] = [];
  const collect = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split(/\r?\n/)) {
      if (line.trim() === '') continue;
      options.onOutput?.(line);
      tail.push(line);
      if (tail.length > 20) tail.shift();
    }
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  let spawnError: Error | undefined;
  child.once('error', (error) => (spawnError = error));
  // 'close' comes after the output streams end, so the tail holds the server's last words.
  let ended: string | undefined;
  child.once('close', (code, signal) => (ended = String(code ?? signal)));

  const stop = () => stopChild(child, options.stopGraceMs ?? 15_000);
  try {
    await waitForHealth(url, {
      timeoutMs: options.startTimeoutMs ?? 120_000,
      ...(certFile ? { certFile } : {}),
      abandon: () => {
        if (spawnError) return `Stellwerk could not be started (${spec.command}): ${spawnError.message}`;
        if (ended !== undefined)
          return `Stellwerk exited during start (${ended}):\n${tail.slice(-5).join('\n')}`;
        return undefined;
      },
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, mode: 'started', pid: child.pid, certFile, stop };
}

/** SIGTERM lets the server drain and stop its PostgreSQL; SIGKILL only if it hangs. */
export async function stopChild(child: ChildProcess, graceMs: number): Promise<void> {
  // No pid: the process never started (spawn error), so there is nothing to wait for.
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}
