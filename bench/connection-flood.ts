import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT, type ServerProcess } from '../test/integration/support/server-process.js';
import type { FloodJob, FloodReport } from './flood-client.js';
import { ms, now, pct, publish, sleep, type Scenario } from './load.js';
import { startBenchSite } from './bench-site.js';

/**
 * `npm run bench:connection-flood` — the acceptance load for the broker's per-tenant connection limits
 * (docs/adr/0083). Tenant "flood" opens MQTT connections up to its account's cap and beyond (refused),
 * then keeps trying; meanwhile tenant "victim" publishes QoS 1 and reads the API. Targets: the victim's
 * publish → PUBACK p99 under 50 ms and API p99 under 200 ms; the flood holds exactly its cap. Exits 1
 * when a target is missed. The same victim load runs first without the flood, as a baseline.
 * BENCH_FLOOD_CAP (2000), BENCH_FLOOD_EXTRA (500 refused in the ramp), BENCH_FLOOD_RETRY_RATE (100/s),
 * BENCH_SECONDS (15), BENCH_VICTIM_RATE (1000 msg/s over two clients).
 */

const CAP = Number(process.env.BENCH_FLOOD_CAP ?? 2000);
const EXTRA = Number(process.env.BENCH_FLOOD_EXTRA ?? 500);
const RETRY_RATE = Number(process.env.BENCH_FLOOD_RETRY_RATE ?? 100);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const VICTIM_RATE = Number(process.env.BENCH_VICTIM_RATE ?? 1000);
const TARGET_PUBACK_P99_MS = 50;
const TARGET_API_P99_MS = 200;
const ADMIN = { email: 'bench@stellwerk.test', password: 'bench password 123' };

const cleanups: Array<() => Promise<void> | void> = [];
let dir: string | undefined;

interface Tenant {
  accountId: string;
  connector: { id: string; credentials: { username: string; password: string } };
}

async function setUp(dir: string) {
  const { server, mqttPort } = await startBenchSite(dir, ADMIN, cleanups, {
    STELLWERK_MQTT_MAX_CONNECTIONS_PER_ACCOUNT: String(CAP),
  });
  const api = async <T>(method: string, route: string, body?: unknown, token?: string) => {
    const response = await fetch(`${server.baseUrl}${route}`, {
      method,
      headers: {
        ...(body ? { 'content-type': 'application/json' } : {}),
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    if (!response.ok) throw new Error(`${route}: ${response.status} ${await response.text()}`);
    return (await response.json()) as T;
  };
  const { token, user } = await api<{ token: string; user: { accountId: string } }>(
    'POST',
    '/xapi/v1/auth/login',
    ADMIN,
  );
  const tenant = async (title: string): Promise<Tenant> => {
    const account = await api<{ id: string }>(
      'POST',
      '/xapi/v1/accounts',
      { title, parentId: user.accountId },
      token,
    );
    const connector = await api<Tenant['connector']>(
      'POST',
      '/xapi/v1/connectors',
      { title: `${title} gateway`, type: 'mqtt-broker', accountId: account.id },
      token,
    );
    return { accountId: account.id, connector };
  };
  const flood = await tenant('flood');
  const victim = await tenant('victim');
  const key = await api<{ key: string }>(
    'POST',
    '/xapi/v1/api-keys',
    { title: 'victim probe', permissions: ['connector.read'], accountId: victim.accountId },
    token,
  );
  return { server, mqttPort, token, flood, victim, victimKey: key.key, api };
}

/** The victim's API reads, one at a time every 50 ms, until `stop` resolves. */
async function apiProbe(server: ServerProcess, key: string, connectorId: string, stop: Promise<void>) {
  let stopped = false;
  void stop.then(() => (stopped = true));
  const latencies: number[] = [];
  let failed = 0;
  for (let i = 0; !stopped; i++) {
    const route = i % 2 ? `/xapi/v1/connectors/${connectorId}` : '/xapi/v1/connectors?pageSize=10';
    const t = now();
    const response = await fetch(`${server.baseUrl}${route}`, { headers: { 'x-api-key': key } });
    await response.arrayBuffer();
    latencies.push(now() - t);
    if (!response.ok) failed++;
    await sleep(50);
  }
  return { latencies, failed };
}

async function victimRun(w: Awaited<ReturnType<typeof setUp>>, name: string) {
  const perClient = VICTIM_RATE / 2;
  const s: Scenario = {
    name,
    qos: 1,
    processes: 1,
    clientsPerProcess: 2,
    perClient: perClient * SECONDS,
    rate: perClient,
    window: perClient,
  };
  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  const probe = apiProbe(w.server, w.victimKey, w.victim.connector.id, stopped);
  const pub = await publish(s, {
    url: `mqtt://127.0.0.1:${w.mqttPort}`,
    ...w.victim.connector.credentials,
    topic: `connectors/${w.victim.connector.id}/devices/{device}/up`,
  });
  stop();
  const api = await probe;
  return { sent: pub.sent, acked: pub.acked, latencies: pub.latencies, api };
}

function startFlood(w: Awaited<ReturnType<typeof setUp>>) {
  const job: FloodJob = {
    url: `mqtt://127.0.0.1:${w.mqttPort}`,
    ...w.flood.connector.credentials,
    attempts: CAP + EXTRA,
    retryRate: RETRY_RATE,
  };
  const child: ChildProcess = fork(path.join(REPO_ROOT, 'bench/flood-client.ts'), [JSON.stringify(job)], {
    execArgv: ['--v8-pool-size=0', '--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  cleanups.unshift(() => void child.kill('SIGKILL'));
  const message = (key: string) =>
    new Promise<FloodReport>((resolve, reject) => {
      const onMessage = (m: FloodReport & Record<string, unknown>) => {
        if (!m[key]) return;
        child.off('message', onMessage);
        resolve(m);
      };
      child.on('message', onMessage);
      child.once('exit', (code) => code !== 0 && reject(new Error(`flood client exited with ${code}`)));
    });
  return { child, ready: message('ready'), ramped: message('ramped'), done: message('done') };
}

/** CPU seconds (user + system) a process used so far, from /proc. */
async function cpuSeconds(pid: number): Promise<number> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function metricLines(baseUrl: string, name: string): Promise<string[]> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`))
    .map((l) => l.replace(/node="[^"]*"/, '').replace(/,}|{,/, (m) => m.replace(',', '')));
}

async function main(): Promise<void> {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'stellwerk-bench-flood-'));
  await fs.chmod(dir, 0o755);
  console.log(
    `bench:connection-flood on ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}): flood tenant cap ${CAP}, ${CAP + EXTRA} connections in the ramp, then ${RETRY_RATE}/s refused retries; victim ${VICTIM_RATE} msg/s QoS 1 for ${SECONDS} s`,
  );
  const w = await setUp(dir);
  const health = await w.api<{ openFiles: unknown }>('GET', '/xapi/v1/health');
  console.log(`server open-file limit ${JSON.stringify(health.openFiles)}`);

  const cpu0 = await cpuSeconds(w.server.pid);
  const baseline = await victimRun(w, 'baseline');
  const cpu1 = await cpuSeconds(w.server.pid);
  const flood = startFlood(w);
  await flood.ready;
  const began = now();
  flood.child.send('go');
  const during = victimRun(w, 'during flood');
  const ramped = await flood.ramped;
  const rampedAt = now() - began;
  const victim = await during;
  const cpu2 = await cpuSeconds(w.server.pid);
  flood.child.send('stop');
  const floodEnd = await flood.done;
  const logs = await w.api<{ data: Array<{ details: { code?: string } }> }>(
    'GET',
    `/xapi/v1/connectors/${w.flood.connector.id}/logs?pageSize=100`,
    undefined,
    w.token,
  );

  const row = (label: string, r: Awaited<ReturnType<typeof victimRun>>) =>
    console.log(
      `  ${label.padEnd(13)} PUBACK p50 ${ms(pct(r.latencies, 50))} p99 ${ms(pct(r.latencies, 99))} max ${ms(pct(r.latencies, 100))} (${r.acked}/${r.sent} acked); API p50 ${ms(pct(r.api.latencies, 50))} p99 ${ms(pct(r.api.latencies, 99))} (${r.api.latencies.length} requests, ${r.api.failed} failed)`,
    );
  console.log(
    `\nserver CPU: ${(cpu1 - cpu0).toFixed(1)} s during the baseline, ${(cpu2 - cpu1).toFixed(1)} s during the flood run (load average ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} CPUs: other processes share them)`,
  );
  console.log('\n## victim tenant');
  row('baseline', baseline);
  row('during flood', victim);
  console.log('\n## flood tenant');
  console.log(
    `  ramp: ${ramped.connected} connected, ${ramped.refused} refused, ${ramped.failed} failed in ${ramped.rampMs} ms (ramp done ${(rampedAt / 1000).toFixed(1)} s into the victim's run)`,
  );
  console.log(
    `  after the ramp: ${floodEnd.retries} retries; in total ${floodEnd.connected} connected, ${floodEnd.refused} refused, ${floodEnd.failed} failed`,
  );
  if (floodEnd.failed) console.log(`  failed: ${JSON.stringify(floodEnd.failures)}`);
  console.log(
    `  connector log: ${logs.data.filter((l) => l.details.code === 'CONNECTION_LIMIT').length} CONNECTION_LIMIT entries`,
  );
  for (const line of await metricLines(w.server.baseUrl, 'stellwerk_broker_connections_closed_total'))
    console.log(`  ${line}`);

  const misses = [
    pct(victim.latencies, 99) >= TARGET_PUBACK_P99_MS &&
      `victim PUBACK p99 ${ms(pct(victim.latencies, 99))} ≥ ${TARGET_PUBACK_P99_MS} ms`,
    pct(victim.api.latencies, 99) >= TARGET_API_P99_MS &&
      `victim API p99 ${ms(pct(victim.api.latencies, 99))} ≥ ${TARGET_API_P99_MS} ms`,
    victim.acked !== victim.sent && `victim: ${victim.sent - victim.acked} messages not acknowledged`,
    victim.api.failed > 0 && `victim: ${victim.api.failed} API requests failed`,
    floodEnd.connected !== CAP && `flood tenant held ${floodEnd.connected} connections, not its cap ${CAP}`,
    floodEnd.refused < EXTRA && `flood tenant: only ${floodEnd.refused} refusals for ${EXTRA} over its cap`,
  ].filter((m): m is string => typeof m === 'string');
  console.log(misses.length ? `\nMISSED: ${misses.join('; ')}` : '\nall targets met');
  process.exitCode = misses.length ? 1 : 0;
}

main()
  .catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(async () => {
    for (const cleanup of cleanups) await Promise.resolve(cleanup()).catch(() => undefined);
    if (dir) await fs.rm(dir, { recursive: true, force: true });
    process.exit(process.exitCode ?? 0);
  });
