import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './mosquitto.js';

/** A real Debian `influxd` (InfluxDB 1.x, v1 HTTP API) on 127.0.0.1 with its data in a temp dir. */
export interface InfluxDb {
  port: number;
  url: string;
  dir: string;
  /** SIGKILL: the process dies without a clean shutdown (the failover test's outage). */
  kill(): Promise<void>;
  /** Starts influxd again on the same data directory and port. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

async function waitForPing(url: string, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`influxd exited: ${log()}`);
    const ok = await fetch(`${url}/ping`, { signal: AbortSignal.timeout(1000) })
      .then((r) => r.status === 204)
      .catch(() => false);
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`influxd did not answer on ${url}: ${log()}`);
}

export async function startInfluxDb(): Promise<InfluxDb> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'stellwerk-influxdb-'));
  const [port, rpcPort] = [await freePort(), await freePort()];
  const url = `http://127.0.0.1:${port}`;
  const config = path.join(dir, 'influxdb.conf');
  await writeFile(
    config,
    [
      'reporting-enabled = false',
      `bind-address = "127.0.0.1:${rpcPort}"`,
      '[meta]',
      `  dir = "${path.join(dir, 'meta')}"`,
      '[data]',
      `  dir = "${path.join(dir, 'data')}"`,
      `  wal-dir = "${path.join(dir, 'wal')}"`,
      '  query-log-enabled = false',
      '[monitor]',
      '  store-enabled = false',
      '[http]',
      `  bind-address = "127.0.0.1:${port}"`,
      '  log-enabled = false',
      '[logging]',
      '  level = "warn"',
      '',
    ].join('\n'),
  );
  let child: ChildProcess;
  let output = '';
  const launch = async () => {
    output = '';
    child = spawn('influxd', ['-config', config], { stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr!.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
    await waitForPing(url, child, () => output);
  };
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    await exited;
  };
  await launch();
  return {
    port,
    url,
    dir,
    kill: () => end('SIGKILL'),
    restart: launch,
    stop: async () => {
      await end('SIGTERM');
      await rm(dir, { recursive: true, force: true });
    },
  };
}
