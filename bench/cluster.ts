import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import {
  clusterNode,
  startHaproxy,
  startRedis,
  type ClusterNode,
} from '../test/integration/support/cluster.js';
import { startServer, tempDataDir } from '../test/integration/support/server-process.js';
import { startBenchDatabase } from './bench-database.js';
import {
  cpuSpent,
  cpuTotal,
  followTwins,
  readCpu,
  type CpuReading,
  type Processes,
} from './cluster-probes.js';
import { postmasterOf } from './fleet-probes.js';
import { FLEET_ADMIN, FLEET_STATES, seedFleet, type FleetSite } from './fleet-seed.js';
import { backlog, metric } from './ingest-twins.js';
import { debug, freePort, ms, now, pct, publish, sleep, type Scenario } from './load.js';

/**
 * `npm run bench:cluster` — not a test. The same offered load, in one run on this machine, against
 * (a) a single node (no Redis) and (b) a cluster of three nodes behind HAProxy sharing one Redis,
 * both on the same PostgreSQL server (a database each). The load is bench:fleet's shape: QoS 1
 * clients, each a device sending `{a, b, c}` routed to three twin states. Per step and mode: CPU per
 * message summed over every process the mode runs (/proc), PUBACK p50/p99, publish → twin state
 * visible p99 on a console's live socket, and the ratios cluster / single. `--quick`: one short step
 * with fewer clients (under 2 minutes). docs/scale-out.md explains the figures.
 */

const QUICK = process.argv.includes('--quick');
const PROCESSES = 4;
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? (QUICK ? 400 : 2000));
const STEPS = (process.env.BENCH_STEPS ?? (QUICK ? '1000' : '1000,2000,4000')).split(',').map(Number);
const STEP_SECONDS = Number(process.env.BENCH_STEP_SECONDS ?? (QUICK ? 10 : 30));
const WARM_UP_SECONDS = Number(process.env.BENCH_WARM_UP_SECONDS ?? (QUICK ? 3 : 5));
const NODES = Number(process.env.BENCH_NODES ?? 3);
/** A step that has not drained this long after its last PUBACK ends the mode's ladder. */
const DRAIN_LIMIT_MS = Number(process.env.BENCH_DRAIN_LIMIT_SECONDS ?? (QUICK ? 20 : 60)) * 1000;
/** Twins the console's live socket follows (a page shows dozens, not thousands). */
const FOLLOWED = Number(process.env.BENCH_FOLLOW ?? 100);
const PREFIX = 'fleet';
/** `single` or `cluster`: runs only that mode (e.g. to profile one); the ratios need both. */
const ONLY = process.env.BENCH_ONLY ?? '';
/** Seconds without load before the ladder: the mode's idle CPU, taken off for the marginal figure. */
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? (QUICK ? 3 : 10));

interface Mode {
  name: string;
  mqttUrl: string;
  /** Every node's base URL: the state-change counters are summed over them. */
  baseUrls: string[];
  db: pg.Client;
  site: FleetSite;
  processes: Processes;
  live: { latencies: number[]; close: () => void };
  /** Where the live socket is connected. */
  liveAt: string;
}

interface StepResult {
  rate: number;
  messages: number;
  acked: number;
  pubackP50: number;
  pubackP99: number;
  visibleP99: number;
  visibleCount: number;
  /** Pushes of twin state `a` the console should get: one per message of a followed device. */
  visibleExpected: number;
  drainMs: number;
  seconds: number;
  cpu: CpuReading;
  /** CPU seconds the mode uses without load over the step's length (its idle cores × seconds). */
  idleSeconds: number;
  publisherSeconds: number;
}

const scenario = (rate: number, seconds: number): Scenario => ({
  name: `${rate} msg/s`,
  qos: 1,
  processes: PROCESSES,
  clientsPerProcess: CLIENTS / PROCESSES,
  perClient: Math.max(1, Math.round((rate / CLIENTS) * seconds)),
  rate: rate / CLIENTS,
  window: 100,
  prefix: PREFIX,
});

const deviceKeys = () =>
  Array.from({ length: PROCESSES }, (_, p) =>
    Array.from({ length: CLIENTS / PROCESSES }, (_, c) => `${PREFIX}${p}-${c}`),
  ).flat();

const nodeEnv = {
  STELLWERK_ADMIN_EMAIL: FLEET_ADMIN.email,
  STELLWERK_ADMIN_PASSWORD: FLEET_ADMIN.password,
  STELLWERK_RATE_LIMIT_MAX: '1000000',
};

async function changes(mode: Mode): Promise<number> {
  let sum = 0;
  for (const url of mode.baseUrls) sum += await metric(url, 'stellwerk_state_changes_total');
  return sum;
}

async function step(mode: Mode, s: Scenario, idleCores = 0): Promise<StepResult> {
  const messages = s.processes * s.clientsPerProcess * s.perClient;
  const expectedChanges = messages * FLEET_STATES.length;
  const changesBefore = await changes(mode);
  mode.live.latencies.length = 0;
  let cpuBefore: CpuReading | undefined;
  // CPU from the moment every client is connected: the step measures messages, not CONNECTs.
  const pub = await publish(
    s,
    {
      url: mode.mqttUrl,
      username: mode.site.credentials.username,
      password: mode.site.credentials.password,
      topic: `connectors/${mode.site.connectorId}/devices/{device}/up`,
      shape: 'fleet',
      stagger: true,
    },
    async () => void (cpuBefore = await readCpu(mode.processes)),
  );
  let drainedAt = NaN;
  while (now() < pub.finishedAt + DRAIN_LIMIT_MS) {
    // Every 100 ms, not faster: scraping three nodes' metrics costs CPU that is being measured.
    if ((await changes(mode)) - changesBefore >= expectedChanges && (await backlog(mode.db)).points === 0) {
      drainedAt = now();
      break;
    }
    await sleep(100);
  }
  // The console's pushes of committed states can trail the commits by seconds under load: their CPU
  // belongs to this step, so the step ends once they stopped coming (or all came).
  const visibleExpected = Math.min(FOLLOWED, CLIENTS) * s.perClient;
  for (let seen = -1; mode.live.latencies.length !== seen && mode.live.latencies.length < visibleExpected;) {
    if (now() > pub.finishedAt + DRAIN_LIMIT_MS) break;
    seen = mode.live.latencies.length;
    await sleep(500);
  }
  const cpu = cpuSpent(cpuBefore!, await readCpu(mode.processes));
  const end = now();
  return {
    rate: Math.round(s.rate * s.processes * s.clientsPerProcess),
    messages,
    acked: pub.acked,
    pubackP50: pct(pub.latencies, 50),
    pubackP99: pct(pub.latencies, 99),
    visibleP99: pct(mode.live.latencies, 99),
    visibleCount: mode.live.latencies.length,
    visibleExpected,
    drainMs: drainedAt - pub.finishedAt,
    seconds: (end - pub.firedAt) / 1000,
    cpu,
    idleSeconds: idleCores * ((end - pub.firedAt) / 1000),
    publisherSeconds: pub.cpuSeconds,
  };
}

async function runLadder(mode: Mode): Promise<StepResult[]> {
  const load = await fs.readFile('/proc/loadavg', 'utf8');
  console.log(
    `\n## ${mode.name}, console's live socket on ${mode.liveAt} (load average before: ${load.split(' ').slice(0, 3).join(' ')})`,
  );
  // Unmeasured warm-up: JIT, caches and pools.
  if (WARM_UP_SECONDS > 0) await step(mode, scenario(STEPS[0]!, WARM_UP_SECONDS));
  // Idle: heartbeats, leases, polls, the Redis and HAProxy checks; a cost per node, not per message.
  await sleep(2000);
  const idleBefore = await readCpu(mode.processes);
  await sleep(IDLE_SECONDS * 1000);
  const idleCores = cpuTotal(cpuSpent(idleBefore, await readCpu(mode.processes))) / IDLE_SECONDS;
  console.log(`  idle: ${idleCores.toFixed(3)} cores (over ${IDLE_SECONDS} s without load)`);
  const results: StepResult[] = [];
  for (const rate of STEPS) {
    debug(`${mode.name}: step ${rate}`);
    const r = await step(mode, scenario(rate, STEP_SECONDS), idleCores);
    results.push(r);
    const perMessage = (seconds: number) => `${((seconds / r.messages) * 1e6).toFixed(0)} µs`;
    const threads = [...r.cpu.threads]
      .filter(([, seconds]) => seconds >= 0.05 * r.cpu.nodes)
      .sort((a, b) => b[1] - a[1])
      .map(([name, seconds]) => `${name} ${perMessage(seconds)}`)
      .join(', ');
    const load = (await fs.readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');
    console.log(
      `  ${r.rate} msg/s (load average after: ${load}): acked ${r.acked}/${r.messages}, PUBACK p50 ${ms(r.pubackP50)} p99 ${ms(r.pubackP99)}, ` +
        `state visible p99 ${ms(r.visibleP99)} (${r.visibleCount} of ${r.visibleExpected} pushes), drained ${Number.isNaN(r.drainMs) ? `not within ${DRAIN_LIMIT_MS / 1000} s` : `after ${(Math.max(0, r.drainMs) / 1000).toFixed(2)} s`}`,
    );
    console.log(
      `    CPU per message ${perMessage(cpuTotal(r.cpu))}, above idle ${perMessage(cpuTotal(r.cpu) - r.idleSeconds)}: nodes ${perMessage(r.cpu.nodes)} (${threads}), PostgreSQL ${perMessage(r.cpu.postgres)}, ` +
        `Redis ${perMessage(r.cpu.redis)}, HAProxy ${perMessage(r.cpu.haproxy)}; publishers ${perMessage(r.publisherSeconds)} (not counted); ` +
        `${(cpuTotal(r.cpu) / r.seconds).toFixed(2)} cores over ${r.seconds.toFixed(1)} s`,
    );
    if (Number.isNaN(r.drainMs)) break;
  }
  await printStorage(mode.db);
  return results;
}

/** Bytes on disk per stored row (table and indexes), for sizing PostgreSQL (docs/scale-out.md). */
async function printStorage(db: pg.Client): Promise<void> {
  const size = async (table: string) =>
    (
      await db.query<{ bytes: string; rows: string }>(
        `SELECT coalesce((SELECT sum(pg_total_relation_size(relid)) FROM pg_partition_tree($1::regclass) WHERE isleaf),
                         pg_total_relation_size($1::regclass)) AS bytes,
                (SELECT count(*) FROM ${table}) AS rows`,
        [table],
      )
    ).rows[0]!;
  const parts = [];
  for (const table of ['packets', 'ts_points']) {
    const { bytes, rows } = await size(table);
    parts.push(
      `${table} ${Number(rows).toLocaleString('en-US')} rows, ${(Number(bytes) / Number(rows)).toFixed(0)} bytes each`,
    );
  }
  console.log(`  stored: ${parts.join('; ')} (with indexes)`);
}

async function singleNode(url: string, dir: string, cleanups: Cleanups): Promise<Mode> {
  const mqttPort = await freePort();
  const dataDir = await tempDataDir('stellwerk-bench-single-');
  cleanups.unshift(() => fs.rm(dataDir, { recursive: true, force: true }));
  const server = await startServer(
    {
      ...nodeEnv,
      DATABASE_URL: url,
      STELLWERK_DATA_DIR: dataDir,
      STELLWERK_MQTT_PORT: String(mqttPort),
    },
    120_000,
    { openFiles: { soft: 20_000, hard: 20_000 } },
  );
  cleanups.unshift(() => server.stop('SIGTERM'));
  const db = await connect(url, cleanups);
  const site = await seedFleet(server.baseUrl, db, deviceKeys());
  const live = await followTwins(server.httpPort, site.token, site.twinIds.slice(0, FOLLOWED));
  cleanups.unshift(async () => live.close());
  return {
    name: 'single node (no Redis, no HAProxy)',
    mqttUrl: `mqtt://127.0.0.1:${mqttPort}`,
    baseUrls: [server.baseUrl],
    db,
    site,
    processes: { nodes: [server.pid], postmaster: await postmasterOf(path.join(dir, 'pg', 'postgres')) },
    live,
    liveAt: 'the node',
  };
}

async function cluster(url: string, dir: string, cleanups: Cleanups): Promise<Mode> {
  const redis = await startRedis();
  cleanups.unshift(() => redis.stop());
  const nodes: ClusterNode[] = [];
  for (let i = 1; i <= NODES; i++)
    nodes.push(await clusterNode(`node${i}`, { databaseUrl: url, redisUrl: redis.url, env: nodeEnv }));
  cleanups.unshift(async () => {
    for (const node of nodes) await node.stop();
    for (const node of nodes) await fs.rm(node.dataDir, { recursive: true, force: true });
  });
  // The first node migrates and creates the admin; the fleet is seeded before the others start,
  // so every node begins with the twins loaded whether or not invalidation crosses nodes.
  const first = await nodes[0]!.start();
  const db = await connect(url, cleanups);
  const site = await seedFleet(first.baseUrl, db, deviceKeys());
  for (const node of nodes.slice(1)) await node.start();
  const haproxy = await startHaproxy(nodes.map((n) => n.ports));
  cleanups.unshift(() => haproxy.stop());
  // The console on the last node: node 1 ran alone first and so holds the processing lease, and every
  // twin state this console gets has crossed the Redis bus.
  const liveNode = nodes.at(-1)!;
  const live = await followTwins(liveNode.process!.httpPort, site.token, site.twinIds.slice(0, FOLLOWED));
  cleanups.unshift(async () => live.close());
  return {
    name: `cluster of ${NODES} nodes (Redis, HAProxy in front of MQTT and HTTP)`,
    mqttUrl: `mqtt://127.0.0.1:${haproxy.mqtt}`,
    baseUrls: nodes.map((n) => n.process!.baseUrl),
    db,
    site,
    processes: {
      nodes: nodes.map((n) => n.process!.pid),
      redis: redis.pid,
      haproxy: haproxy.pid,
      postmaster: await postmasterOf(path.join(dir, 'pg', 'postgres')),
    },
    live,
    liveAt: liveNode.name,
  };
}

type Cleanups = Array<() => Promise<unknown>>;

/** Sets a mode up, runs it and stops everything it started, also when either fails. */
async function withCleanups<T>(
  setUp: (cleanups: Cleanups) => Promise<Mode>,
  run: (mode: Mode) => Promise<T>,
): Promise<T> {
  const cleanups: Cleanups = [];
  try {
    return await run(await setUp(cleanups));
  } finally {
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
  }
}

async function connect(url: string, cleanups: Cleanups): Promise<pg.Client> {
  const db = new pg.Client({ connectionString: url });
  // PostgreSQL stopping at the end (or after a failure) must not hide the bench's own error.
  db.on('error', () => undefined);
  await db.connect();
  cleanups.unshift(() => db.end());
  return db;
}

function compare(single: StepResult[], clustered: StepResult[]): void {
  const us = (r: StepResult) => (cpuTotal(r.cpu) / r.messages) * 1e6;
  const above = (r: StepResult) => ((cpuTotal(r.cpu) - r.idleSeconds) / r.messages) * 1e6;
  console.log(
    '\n| msg/s | CPU per message single / cluster | ratio | above idle single / cluster | ratio | PUBACK p50 single / cluster | PUBACK p99 single / cluster | PUBACK difference p50 / p99 | state visible p99 single / cluster |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const s of single) {
    const c = clustered.find((r) => r.rate === s.rate);
    if (!c) continue;
    console.log(
      `| ${s.rate.toLocaleString('en-US')} | ${us(s).toFixed(0)} / ${us(c).toFixed(0)} µs | ${(us(c) / us(s)).toFixed(2)} ` +
        `| ${above(s).toFixed(0)} / ${above(c).toFixed(0)} µs | ${(above(c) / above(s)).toFixed(2)} ` +
        `| ${ms(s.pubackP50)} / ${ms(c.pubackP50)} | ${ms(s.pubackP99)} / ${ms(c.pubackP99)} ` +
        `| ${ms(c.pubackP50 - s.pubackP50)} / ${ms(c.pubackP99 - s.pubackP99)} | ${ms(s.visibleP99)} / ${ms(c.visibleP99)} |`,
    );
  }
}

async function main(): Promise<void> {
  const cleanups: Cleanups = [];
  const { dir, url, embedded } = await startBenchDatabase('cluster');
  cleanups.push(() => embedded.stop());
  console.log(
    `bench:cluster on ${os.cpus().length} CPUs${QUICK ? ' (--quick)' : ''}: ${CLIENTS} QoS 1 clients in ${PROCESSES} processes, {a, b, c} → 3 twin states; ` +
      `steps ${STEPS.join(', ')} msg/s × ${STEP_SECONDS} s; single node, then ${NODES} nodes; one PostgreSQL server, a database each`,
  );
  try {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query('CREATE DATABASE stellwerk_cluster');
    await admin.end();
    const clusterUrl = new URL(url);
    clusterUrl.pathname = '/stellwerk_cluster';
    // One mode at a time, the other stopped: each has the machine to itself.
    const single = ONLY === 'cluster' ? [] : await withCleanups((c) => singleNode(url, dir, c), runLadder);
    const clustered =
      ONLY === 'single' ? [] : await withCleanups((c) => cluster(clusterUrl.toString(), dir, c), runLadder);
    compare(single, clustered);
    const load = await fs.readFile('/proc/loadavg', 'utf8');
    console.log(`\nload average at the end: ${load.split(' ').slice(0, 3).join(' ')}`);
  } finally {
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
    await fs.rm(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
