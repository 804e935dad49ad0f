import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import pino from 'pino';
import WebSocket from 'ws';
import { EmbeddedDatabase } from '../server/src/platform/db/embedded-postgres.js';
import { startServer, type ServerProcess } from '../test/integration/support/server-process.js';
import {
  copyBaseline,
  coresByKey,
  postgresCpuByRole,
  postgresCpuSeconds,
  postmasterOf,
  processCpuSeconds,
  threadCpuSeconds,
} from './fleet-probes.js';
import { FLEET_ADMIN, FLEET_STATES, seedFleet } from './fleet-seed.js';
import { backlog, metric } from './ingest-twins.js';
import {
  debug,
  freePort,
  mosquittoRun,
  ms,
  now,
  pct,
  publish,
  sleep,
  startMosquitto,
  type Scenario,
} from './load.js';

/**
 * `npm run bench:fleet` — not a test. The shape of a real site: 2,000 MQTT clients (QoS 1), each a
 * device sending JSON `{a, b, c}` whose three values all change in every message, each device routed
 * (dynamic data routing) to a twin with three states; so every message is three twin state changes
 * and three time-series points. A step ladder of total rates, each step against Mosquitto (pub → sub)
 * and then against Stellwerk, in the same run. docs/performance.md explains the figures.
 */

const PROCESSES = 4;
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 2000);
const STATES = FLEET_STATES;
const STEPS = (process.env.BENCH_STEPS ?? '2000,5000,10000,15000,20000').split(',').map(Number);
const STEP_SECONDS = Number(process.env.BENCH_STEP_SECONDS ?? 60);
/** A step that has not drained this long after its end ends the ladder: higher steps would not either. */
const DRAIN_LIMIT_MS = Number(process.env.BENCH_DRAIN_LIMIT_SECONDS ?? 60) * 1000;
/** The sustained rate is the highest step whose backlog drains within this time (the issue's goal). */
const SUSTAINED_DRAIN_MS = 2000;
const SOAK_SECONDS = Number(process.env.BENCH_SOAK_SECONDS ?? 0);
const SOAK_RATE = Number(process.env.BENCH_SOAK_RATE ?? 10_000);
const COPY_MESSAGES = Number(process.env.BENCH_COPY_MESSAGES ?? 100_000);
/** Devices and twins the bench's live socket follows (BENCH_FOLLOW=2000: every one). */
const FOLLOWED = Number(process.env.BENCH_FOLLOW ?? 100);
const SKIP_MOSQUITTO = process.env.BENCH_MOSQUITTO === '0';
/** `1`: load pg_stat_statements and print the statements PostgreSQL spent the most time on. */
const STATEMENTS = process.env.BENCH_PG_STATEMENTS === '1';
/**
 * Server settings to compare, e.g. `STELLWERK_INGEST_COMMIT_INTERVAL_MS=250 STELLWERK_INGEST_BATCH_SIZE=5000`.
 * Only `STELLWERK_*` pairs: anything else is refused, not dropped, because a comparison whose
 * variant never reached the server compares the code with itself (the server inherits the bench's
 * own environment, so a scratch switch is set there instead).
 */
function serverSettings(): Record<string, string> {
  const pairs = (process.env.BENCH_SERVER_ENV ?? '').split(/\s+/).filter(Boolean);
  const refused = pairs.filter((pair) => !/^STELLWERK_[A-Z0-9_]+=/.test(pair));
  if (refused.length > 0) {
    throw new Error(
      `BENCH_SERVER_ENV takes STELLWERK_NAME=value pairs only; refused: ${refused.join(' ')} ` +
        '(set other variables in the environment of the bench itself)',
    );
  }
  return Object.fromEntries(
    pairs.map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );
}
/** Read before anything starts, so a refused setting costs no set-up. */
const SERVER_SETTINGS = serverSettings();
const ADMIN = FLEET_ADMIN;
const PREFIX = 'fleet';

interface Site {
  server: ServerProcess;
  db: pg.Client;
  postmaster: number;
  mqttPort: number;
  connectorId: string;
  credentials: { username: string; password: string };
  stateIds: string[];
  /** Publish → the device's packet pushed on the live WebSocket (on arrival, ADR 0104), ms. */
  visible: number[];
  /** Publish → twin state `a` (the publish time) pushed on the live WebSocket (after its commit), ms. */
  twinVisible: number[];
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

async function setUp(dir: string, cleanups: Array<() => Promise<unknown>>): Promise<Site> {
  const dataDir = path.join(dir, 'pg');
  const embedded = new EmbeddedDatabase({
    dataDir,
    port: 0,
    database: 'stellwerk',
    log: pino({ level: 'warn' }),
  });
  let url = await embedded.start();
  cleanups.push(() => embedded.stop());
  if (STATEMENTS) {
    // Diagnostics: which statements PostgreSQL spends its time on (printed at the end).
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'`);
    await admin.end();
    await embedded.stop();
    url = await embedded.start();
  }
  const mqttPort = await freePort();
  const server = await startServer(
    {
      DATABASE_URL: url,
      STELLWERK_DATA_DIR: dir,
      STELLWERK_MQTT_PORT: String(mqttPort),
      STELLWERK_MQTT_HOST: '127.0.0.1',
      STELLWERK_ADMIN_EMAIL: ADMIN.email,
      STELLWERK_ADMIN_PASSWORD: ADMIN.password,
      STELLWERK_RATE_LIMIT_MAX: '1000000',
      ...SERVER_SETTINGS,
    },
    120_000,
    { openFiles: { soft: 20_000, hard: 20_000 } },
  );
  cleanups.unshift(() => server.stop('SIGTERM'));
  const db = new pg.Client({ connectionString: url });
  // PostgreSQL stopping at the end (or after a failure) must not hide the bench's own error.
  db.on('error', () => undefined);
  await db.connect();
  if (STATEMENTS) await db.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  const keys = deviceKeys();
  const seeded = await seedFleet(server.baseUrl, db, keys);
  const { token, stateIds } = seeded;
  const twinIds = [...seeded.twinIds];
  console.log(
    `${keys.length} devices, ${twinIds.length} twins with ${STATES.length} dynamic-routing states each (${seeded.seconds.toFixed(1)} s)`,
  );
  const visible: number[] = [];
  const twinVisible: number[] = [];
  const socket = new WebSocket(`ws://127.0.0.1:${server.httpPort}/xapi/v1/live`, [
    'stellwerk.live.v1',
    `bearer.${token}`,
  ]);
  await new Promise((resolve, reject) => (socket.once('open', resolve), socket.once('error', reject)));
  socket.on('message', (data: Buffer) => {
    const m = JSON.parse(data.toString()) as {
      type: string;
      states?: Array<{ key: string; value: unknown }>;
      packets?: Array<{ states?: { a?: unknown } }>;
    };
    const at = now();
    if (m.type === 'states')
      for (const s of m.states ?? [])
        if (s.key === 'a' && typeof s.value === 'number') twinVisible.push(at - s.value);
    if (m.type === 'packets')
      for (const p of m.packets ?? []) if (typeof p.states?.a === 'number') visible.push(at - p.states.a);
    if (m.type === 'dropped' || m.type === 'error')
      console.log(`live socket: ${data.toString().slice(0, 300)}`);
  });
  // Consoles follow some devices and twins (a page shows dozens, not thousands): their packets are
  // shown on arrival, their twin states after commit. The latencies are measured on these.
  const deviceIds = seeded.deviceIds.slice(0, FOLLOWED);
  twinIds.splice(FOLLOWED);
  for (let i = 0; i < twinIds.length; i += 1000)
    socket.send(JSON.stringify({ subscribe: { twinIds: twinIds.slice(i, i + 1000) } }));
  for (let i = 0; i < deviceIds.length; i += 1000)
    socket.send(JSON.stringify({ subscribe: { deviceIds: deviceIds.slice(i, i + 1000) } }));
  cleanups.unshift(async () => socket.close());
  return {
    server,
    db,
    postmaster: await postmasterOf(path.join(dataDir, 'postgres')),
    mqttPort,
    connectorId: seeded.connectorId,
    credentials: seeded.credentials,
    stateIds,
    visible,
    twinVisible,
  };
}

interface StepResult {
  rate: number;
  messages: number;
  acked: number;
  pubackP50: number;
  pubackP99: number;
  visibleP99: number;
  twinVisibleP99: number;
  /** State changes not yet committed when the last PUBACK came. */
  backlogChanges: number;
  /** Points committed but not yet in ts_points at that moment. */
  backlogPoints: number;
  /** From the last PUBACK until every change and point of the step was stored; NaN = not within the limit. */
  drainMs: number;
  cpu: { server: number; postgres: number; publishers: number };
  /** The server's threads and PostgreSQL's processes by role, as `name cores, …`. */
  cpuDetail: { server: string; postgres: string };
  rssMb: number;
  /** Arriving packets the live view declined (overloaded), by reason: shown after their commit instead. */
  declinedLive: Record<string, number>;
}

async function stellwerkStep(site: Site, s: Scenario, onTick?: () => void): Promise<StepResult> {
  const messages = s.processes * s.clientsPerProcess * s.perClient;
  const changesBefore = await metric(site.server.baseUrl, 'stellwerk_state_changes_total');
  const declinedBefore = await declinedByReason(site.server.baseUrl);
  const cpuBefore = {
    server: await processCpuSeconds(site.server.pid),
    postgres: await postgresCpuSeconds(site.postmaster),
    threads: await threadCpuSeconds(site.server.pid),
    roles: await postgresCpuByRole(site.db),
  };
  site.visible.length = 0;
  site.twinVisible.length = 0;
  const ticker = onTick && setInterval(onTick, 30_000);
  const pub = await publish(s, {
    url: `mqtt://127.0.0.1:${site.mqttPort}`,
    username: site.credentials.username,
    password: site.credentials.password,
    topic: `connectors/${site.connectorId}/devices/{device}/up`,
    shape: 'fleet',
    stagger: true,
  });
  clearInterval(ticker);
  const expectedChanges = messages * STATES.length;
  const changes = async () =>
    (await metric(site.server.baseUrl, 'stellwerk_state_changes_total')) - changesBefore;
  const backlogChanges = expectedChanges - (await changes());
  const backlogPoints = (await backlog(site.db)).points;
  let drainedAt = NaN;
  const deadline = pub.finishedAt + DRAIN_LIMIT_MS;
  while (now() < deadline) {
    if ((await changes()) >= expectedChanges && (await backlog(site.db)).points === 0) {
      drainedAt = now();
      break;
    }
    await sleep(10);
  }
  const seconds = ((Number.isNaN(drainedAt) ? now() : drainedAt) - pub.firedAt) / 1000;
  const status = await fs.readFile(`/proc/${site.server.pid}/status`, 'utf8');
  return {
    rate: Math.round(s.rate * s.processes * s.clientsPerProcess),
    messages,
    acked: pub.acked,
    pubackP50: pct(pub.latencies, 50),
    pubackP99: pct(pub.latencies, 99),
    visibleP99: pct(site.visible, 99),
    twinVisibleP99: pct(site.twinVisible, 99),
    backlogChanges,
    backlogPoints,
    drainMs: drainedAt - pub.finishedAt,
    cpu: {
      server: ((await processCpuSeconds(site.server.pid)) - cpuBefore.server) / seconds,
      postgres: ((await postgresCpuSeconds(site.postmaster)) - cpuBefore.postgres) / seconds,
      publishers: pub.cpuSeconds / seconds,
    },
    cpuDetail: {
      server: coresByKey(cpuBefore.threads, await threadCpuSeconds(site.server.pid), seconds),
      postgres: coresByKey(cpuBefore.roles, await postgresCpuByRole(site.db), seconds),
    },
    rssMb: Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024),
    declinedLive: difference(await declinedByReason(site.server.baseUrl), declinedBefore),
  };
}

async function printStatements(db: pg.Client): Promise<void> {
  const { rows } = await db.query<{ ms: number; calls: string; rows: string; query: string }>(
    `SELECT round(total_exec_time)::int AS ms, calls, rows, regexp_replace(query, '\\s+', ' ', 'g') AS query
       FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 15`,
  );
  console.log('\nPostgreSQL time by statement (pg_stat_statements, whole run):');
  for (const r of rows)
    console.log(`  ${r.ms} ms  ${r.calls} calls  ${r.rows} rows  ${r.query.slice(0, 160)}`);
}

const n = (v: number) => (Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : '—');
const cores = (v: number) => v.toFixed(2);

async function main(): Promise<void> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'stellwerk-fleet-'));
  await fs.chmod(dir, 0o755);
  const cleanups: Array<() => Promise<unknown>> = [];
  console.log(
    `bench:fleet on ${os.cpus().length} CPUs, ${CLIENTS} clients in ${PROCESSES} processes, QoS 1, {a, b, c} → 3 twin states; steps ${STEPS.join(', ')} msg/s × ${STEP_SECONDS} s`,
  );
  try {
    const mosquitto = await startMosquitto(dir);
    cleanups.push(async () => mosquitto.stop());
    const site = await setUp(dir, cleanups);
    // Unmeasured warm-up: JIT, caches and pools (bench:ingest does the same).
    await stellwerkStep(site, scenario(STEPS[0]!, 5));
    const rows: string[] = [];
    let sustained = 0;
    for (const rate of STEPS) {
      const s = scenario(rate, STEP_SECONDS);
      const mosquittoCpu = await processCpuSeconds(mosquitto.pid);
      const m = SKIP_MOSQUITTO
        ? undefined
        : await mosquittoRun(s, mosquitto.port, { shape: 'fleet', stagger: true });
      // Mosquitto's own CPU over the step (the broker alone; its publishers are the same as Stellwerk's).
      const mosquittoCores =
        m && ((await processCpuSeconds(mosquitto.pid)) - mosquittoCpu) / ((now() - m.firedAt) / 1000);
      debug(`step ${rate}: stellwerk`);
      const r = await stellwerkStep(site, s);
      if (r.acked === r.messages && r.drainMs <= SUSTAINED_DRAIN_MS) sustained = rate;
      const row =
        `| ${n(rate)} | ${r.acked === r.messages ? 'all' : `${n(r.acked)} of ${n(r.messages)}`} ` +
        `| ${ms(r.pubackP50)} / ${ms(r.pubackP99)} | ${ms(r.visibleP99)} / ${ms(r.twinVisibleP99)} | ${n(r.backlogChanges)} changes, ${n(r.backlogPoints)} points ` +
        `| ${Number.isNaN(r.drainMs) ? `not within ${DRAIN_LIMIT_MS / 1000} s` : `${(Math.max(0, r.drainMs) / 1000).toFixed(2)} s`} ` +
        `| ${cores(r.cpu.server)} / ${cores(r.cpu.postgres)} / ${cores(r.cpu.publishers)} | ${r.rssMb} MB ` +
        `| ${m ? `${ms(m.pubackP50)} / ${ms(m.pubackP99)}, pub→sub p99 ${ms(m.p99)}, ${cores(mosquittoCores!)} cores` : '—'} |`;
      rows.push(row);
      console.log(row);
      console.log(
        `  CPU cores by thread: ${r.cpuDetail.server}; PostgreSQL by role: ${r.cpuDetail.postgres}; ` +
          `live view declined ${declinedText(r.declinedLive)} of ${n(r.messages)} packets (overloaded: shown after commit)`,
      );
      if (Number.isNaN(r.drainMs)) break;
    }
    console.log(
      '\n| msg/s offered | acknowledged | PUBACK p50 / p99 | visible p99: device states / twin states | backlog at step end | drained after | CPU cores server / PostgreSQL / publishers | server RSS | Mosquitto PUBACK p50 / p99, CPU |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|');
    for (const row of rows) console.log(row);
    const copy = await copyBaseline(site.db, site.connectorId, site.stateIds, COPY_MESSAGES, STATES.length);
    console.log(
      `\nsustained: ${n(sustained)} msg/s (${n(sustained * STATES.length)} state changes and points/s; highest step drained within ${SUSTAINED_DRAIN_MS / 1000} s)`,
    );
    console.log(
      `plain COPY of the same rows (1 packet + ${STATES.length} ts_points per message, ${n(copy.messages)} messages): ${n(copy.messagesPerSecond)} msg/s; sustained = ${((100 * sustained) / copy.messagesPerSecond).toFixed(0)}% of it`,
    );
    if (SOAK_SECONDS > 0) {
      const rss: number[] = [];
      const sample = () =>
        void fs
          .readFile(`/proc/${site.server.pid}/status`, 'utf8')
          .then((t) => rss.push(Math.round(Number(/VmRSS:\s+(\d+)/.exec(t)?.[1] ?? 0) / 1024)));
      const r = await stellwerkStep(site, scenario(SOAK_RATE, SOAK_SECONDS), sample);
      console.log(
        `\nsoak ${n(SOAK_RATE)} msg/s for ${SOAK_SECONDS} s: acked ${n(r.acked)}/${n(r.messages)}, PUBACK p99 ${ms(r.pubackP99)}, visible p99 ${ms(r.visibleP99)}, drained after ${(r.drainMs / 1000).toFixed(2)} s; live view declined ${declinedText(r.declinedLive)}; RSS every 30 s (MB): ${rss.join(' ')}`,
      );
    }
    if (STATEMENTS) await printStatements(site.db);
    await site.db.end();
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

/** `stellwerk_live_shed_total` by its `reason` label. */
async function declinedByReason(baseUrl: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const found: Record<string, number> = {};
  for (const m of text.matchAll(/^stellwerk_live_shed_total\{[^}]*reason="([^"]+)"[^}]*\} (\S+)$/gm))
    found[m[1]!] = Number(m[2]);
  return found;
}

const difference = (after: Record<string, number>, before: Record<string, number>) =>
  Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - (before[k] ?? 0)]));

const declinedText = (byReason: Record<string, number>) => {
  const parts = Object.entries(byReason).filter(([, v]) => v > 0);
  return parts.length === 0 ? '0' : parts.map(([k, v]) => `${n(v)} (${k})`).join(' + ');
};
