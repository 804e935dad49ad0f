import { fork, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import mqtt from 'mqtt';
import { REPO_ROOT } from '../test/integration/support/server-process.js';
import type { PublisherJob } from './publisher.js';

/**
 * The load side of `npm run bench:ingest`: scenarios, the publisher processes (bench/publisher.ts)
 * and the Mosquitto pub → sub baseline. Measuring figures helpers live here too, so that
 * bench/ingest.ts and bench/ingest-twins.ts compute them the same way.
 */

export interface Scenario {
  name: string;
  qos: 0 | 1;
  processes: number;
  clientsPerProcess: number;
  perClient: number;
  rate: number;
  window: number;
  /** Device key prefix of the publishers (default `fast` or `slow` by clients per process). */
  prefix?: string;
}

export const debug = (text: string) =>
  process.env.BENCH_DEBUG && console.log(`  [${new Date().toISOString()}] ${text}`);
export const now = () => performance.timeOrigin + performance.now();
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const pct = (values: number[], p: number) => {
  if (values.length === 0) return NaN;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};
export const ms = (v: number) => (Number.isFinite(v) ? `${v.toFixed(1)} ms` : '—');
export const rate = (n: number, millis: number) => Math.round((n * 1000) / Math.max(1, millis));

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** The device keys the publishers use: `fast<process>-<client>` and `slow<process>-<client>`. */
export function deviceKeys(): string[] {
  const keys = (prefix: string, processes: number, clients: number) =>
    Array.from({ length: processes }, (_, p) =>
      Array.from({ length: clients }, (_, c) => `${prefix}${p}-${c}`),
    ).flat();
  return [...keys('fast', 2, 2), ...keys('slow', 2, 500)];
}

interface PublisherResult {
  sent: number;
  acked: number;
  startedAt: number;
  finishedAt: number;
  latencies: number[];
  cpuMs: number;
}

/** Starts the scenario's publisher processes, waits until all clients are connected, then fires. */
export async function publish(
  s: Scenario,
  base: Omit<PublisherJob, 'clients' | 'perClient' | 'rate' | 'window' | 'qos' | 'devicePrefix'>,
  /** Runs once every client is connected, just before the publishers fire (e.g. a CPU reading). */
  onReady?: () => Promise<void>,
) {
  const children: ChildProcess[] = [];
  const results: Array<Promise<PublisherResult>> = [];
  const ready: Array<Promise<void>> = [];
  for (let p = 0; p < s.processes; p++) {
    const job: PublisherJob = {
      ...base,
      devicePrefix: `${s.prefix ?? (s.clientsPerProcess > 10 ? 'slow' : 'fast')}${p}`,
      clients: s.clientsPerProcess,
      perClient: s.perClient,
      rate: s.rate,
      window: s.window,
      qos: s.qos,
    };
    const child = fork(path.join(REPO_ROOT, 'bench/publisher.ts'), [JSON.stringify(job)], {
      // One V8 helper thread per CPU beyond the first, as the server (node-flags.ts): with Node's
      // default four per publisher, two publishers' garbage collections at once took both CPUs
      // for 10 ms and the server's broker thread waited in the run queue (docs/performance.md).
      execArgv: ['--v8-pool-size=0', '--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    children.push(child);
    ready.push(new Promise((resolve) => child.once('message', () => resolve())));
    results.push(
      new Promise((resolve, reject) => {
        child.on('message', (m: PublisherResult & { done?: boolean }) => m.done && resolve(m));
        child.once('exit', (code) => code !== 0 && reject(new Error(`publisher exited with ${code}`)));
      }),
    );
  }
  await Promise.all(ready);
  debug('publishers ready');
  await onReady?.();
  const firedAt = now();
  for (const child of children) child.send('go');
  const all = await Promise.all(results);
  return {
    firedAt,
    sent: all.reduce((n, r) => n + r.sent, 0),
    acked: all.reduce((n, r) => n + r.acked, 0),
    finishedAt: Math.max(...all.map((r) => r.finishedAt)),
    latencies: all.flatMap((r) => r.latencies),
    cpuSeconds: all.reduce((n, r) => n + r.cpuMs, 0) / 1000,
  };
}

export async function startMosquitto(dir: string): Promise<{ port: number; pid: number; stop: () => void }> {
  const port = await freePort();
  const conf = path.join(dir, 'mosquitto.conf');
  await fs.writeFile(
    conf,
    [
      `listener ${port} 127.0.0.1`,
      'allow_anonymous true',
      'persistence false',
      'max_queued_messages 0',
      'max_inflight_messages 0',
      'log_dest none',
    ].join('\n'),
  );
  const child = spawn('mosquitto', ['-c', conf], { stdio: 'ignore' });
  for (let i = 0; i < 100; i++) {
    const open = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => (s.destroy(), resolve(true)));
      s.once('error', () => resolve(false));
    });
    if (open) return { port, pid: child.pid!, stop: () => child.kill('SIGTERM') };
    await sleep(50);
  }
  throw new Error('mosquitto did not start');
}

export async function mosquittoRun(
  s: Scenario,
  port: number,
  job: Pick<PublisherJob, 'shape' | 'stagger'> = {},
) {
  const expected = s.processes * s.clientsPerProcess * s.perClient;
  const sub = await mqtt.connectAsync(`mqtt://127.0.0.1:${port}`, { clientId: `bench-sub-${Date.now()}` });
  await sub.subscribeAsync('bench/#', { qos: s.qos });
  let received = 0;
  let last = 0;
  const latencies: number[] = [];
  sub.on('message', (_topic, payload) => {
    received++;
    last = now();
    const message = JSON.parse(payload.toString()) as { t?: number; a?: number };
    // The publish time: `t` of the telemetry shape, `a` of the fleet shape.
    latencies.push(last - (message.t ?? message.a ?? NaN));
  });
  const pub = await publish(s, { url: `mqtt://127.0.0.1:${port}`, topic: 'bench/{device}/up', ...job });
  debug(`published ${pub.sent}, acked ${pub.acked}; received ${received}`);
  const deadline = Date.now() + 30_000;
  while (received < expected && Date.now() < deadline) await sleep(50);
  debug(`received ${received}`);
  await sub.endAsync(true);
  return {
    expected,
    received,
    perSecond: rate(received, last - pub.firedAt),
    firedAt: pub.firedAt,
    p50: pct(latencies, 50),
    p99: pct(latencies, 99),
    pubackP50: pct(pub.latencies, 50),
    pubackP99: pct(pub.latencies, 99),
    acked: pub.acked,
  };
}
