import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './mosquitto.js';
import { startServer, tempDataDir, type ServerProcess } from './server-process.js';

/**
 * A cluster on loopback for the scale-out tests: Debian's `redis-server`, Stellwerk nodes sharing one
 * PostgreSQL database and that Redis, and Debian's `haproxy` in front of their MQTT and HTTP ports.
 * Each node gets fixed ports up front, so a restarted node comes back where HAProxy looks for it.
 */

export interface Peer {
  port: number;
  stop(): Promise<void>;
  /** Everything the process wrote so far. */
  output(): string;
}

export interface Redis extends Peer {
  url: string;
  /** The process id, e.g. for its CPU time in /proc (bench:cluster). */
  pid: number;
}

export async function waitForPort(port: number, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${child.spawnfile} exited: ${output()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => (socket.destroy(), resolve(true)));
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${child.spawnfile} did not listen on ${port}: ${output()}`);
}

function run(command: string, args: string[]): { child: ChildProcess; output: () => string } {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
  return { child, output: () => text };
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  return exited.finally(() => clearTimeout(timer));
}

/** Debian's redis-server on a free loopback port, without persistence (the tests need none). */
/** `port`: a restart where a stopped one listened (the nodes keep their URL). */
export async function startRedis(port?: number): Promise<Redis> {
  port ??= await freePort();
  const { child, output } = run('/usr/bin/redis-server', [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
    '--protected-mode',
    'yes',
  ]);
  await waitForPort(port, child, output);
  return { port, pid: child.pid!, url: `redis://127.0.0.1:${port}/0`, output, stop: () => stopChild(child) };
}

export interface NodePorts {
  http: number;
  mqtt: number;
}

export interface Haproxy extends Peer {
  /** The balanced ports clients use. */
  http: number;
  mqtt: number;
  /** The process id, e.g. for its CPU time in /proc (bench:cluster). */
  pid: number;
}

/**
 * Debian's haproxy in TCP mode in front of the nodes' MQTT and HTTP ports, round robin, with a
 * connect check every 200 ms: a dead node is out of rotation within a fraction of a second and back
 * once it listens again.
 */
export async function startHaproxy(nodes: NodePorts[]): Promise<Haproxy> {
  const [http, mqtt] = [await freePort(), await freePort()];
  const dir = await mkdtemp(path.join(os.tmpdir(), 'stellwerk-haproxy-'));
  const servers = (kind: keyof NodePorts) =>
    nodes
      .map((n, i) => `  server node${i + 1} 127.0.0.1:${n[kind]} check inter 200 fall 1 rise 1`)
      .join('\n');
  const config = `global
  maxconn 4000
defaults
  mode tcp
  timeout connect 2s
  timeout client 120s
  timeout server 120s
  option redispatch
  retries 3
frontend http_in
  bind 127.0.0.1:${http}
  default_backend nodes_http
backend nodes_http
  balance roundrobin
${servers('http')}
frontend mqtt_in
  bind 127.0.0.1:${mqtt}
  default_backend nodes_mqtt
backend nodes_mqtt
  balance roundrobin
${servers('mqtt')}
`;
  const file = path.join(dir, 'haproxy.cfg');
  await writeFile(file, config);
  const { child, output } = run('/usr/sbin/haproxy', ['-db', '-f', file]);
  await waitForPort(mqtt, child, output);
  await waitForPort(http, child, output);
  return {
    port: http,
    pid: child.pid!,
    http,
    mqtt,
    output,
    stop: async () => {
      await stopChild(child);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface ClusterNode {
  name: string;
  ports: NodePorts;
  dataDir: string;
  /** The running process; replaced by `start` after a stop or kill. */
  process: ServerProcess | undefined;
  start(): Promise<ServerProcess>;
  /** SIGKILL, as a machine dying would. */
  kill(): Promise<void>;
  /** SIGTERM: a graceful stop, as a service manager's. */
  stop(): Promise<void>;
}

/**
 * A Stellwerk node of a cluster (not started yet): its own data directory and fixed ports, sharing
 * `databaseUrl` and `redisUrl`; `env` adds or overrides variables (e.g. shorter intervals).
 */
export async function clusterNode(
  name: string,
  shared: { databaseUrl: string; redisUrl: string; env?: Record<string, string> },
): Promise<ClusterNode> {
  const ports = { http: await freePort(), mqtt: await freePort() };
  const dataDir = await tempDataDir(`stellwerk-${name}-`);
  const node: ClusterNode = {
    name,
    ports,
    dataDir,
    process: undefined,
    start: async () => {
      node.process = await startServer({
        DATABASE_URL: shared.databaseUrl,
        STELLWERK_REDIS_URL: shared.redisUrl,
        STELLWERK_DATA_DIR: dataDir,
        STELLWERK_NODE_NAME: name,
        STELLWERK_HTTP_PORT: String(ports.http),
        STELLWERK_MQTT_PORT: String(ports.mqtt),
        ...shared.env,
      });
      return node.process;
    },
    kill: async () => {
      await node.process?.stop('SIGKILL');
      node.process = undefined;
    },
    stop: async () => {
      await node.process?.stop('SIGTERM');
      node.process = undefined;
    },
  };
  return node;
}

/** Deletes a node's data directory, as losing its disk would. */
export async function loseDisk(node: ClusterNode): Promise<void> {
  await rm(node.dataDir, { recursive: true, force: true });
}
