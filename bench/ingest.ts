import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import pino from 'pino';
import WebSocket from 'ws';
import { EmbeddedDatabase } from '../server/src/platform/db/embedded-postgres.js';
import { startServer, type ServerProcess } from '../test/integration/support/server-process.js';
import { backlog, createTwins, metric, printTwinFigures, referenceIdOf, TwinProbe } from './ingest-twins.js';
import {
  debug,
  deviceKeys,
  freePort,
  mosquittoRun,
  ms,
  now,
  pct,
  publish,
  rate,
  sleep,
  startMosquitto,
  type Scenario,
} from './load.js';

/**
 * `npm run bench:ingest` — not a test. Same load against raw Mosquitto (pub → sub) and against
 * Stellwerk (publish → durable → parsed → state visible on the live WebSocket → twin state changed →
 * row in ts_points; bench/ingest-twins.ts), on this machine.
 * Scale with BENCH_SCALE (default 1), add a soak with BENCH_SOAK_SECONDS (e.g. 600). docs/performance.md.
 */

const SCALE = Number(process.env.BENCH_SCALE ?? 1);
const SOAK_SECONDS = Number(process.env.BENCH_SOAK_SECONDS ?? 0);
/** `0`: no twins (devices keep their referenceId), to see what the state engine and the ts writer cost. */
const TWINS = process.env.BENCH_TWINS !== '0';
/** Runs only the scenarios whose name contains this text (e.g. `QoS 1`). */
const ONLY = process.env.BENCH_ONLY ?? '';
const ADMIN = { email: 'bench@stellwerk.test', password: 'bench password 123' };
/**
 * Seconds of unmeasured load at 10,000 msg/s before the first scenario: the server's first MQTT
 * packets otherwise meet cold JIT code, empty caches and pools (a stall of 100–200 ms at the start
 * of whichever scenario comes first). 0 measures the cold start too.
 */
const WARM_UP_SECONDS = Number(process.env.BENCH_WARM_UP_SECONDS ?? 2);

const SCENARIOS: Scenario[] = [
  {
    name: 'fast QoS 0',
    qos: 0,
    processes: 2,
    clientsPerProcess: 2,
    perClient: 25_000 * SCALE,
    rate: 0,
    window: 0,
  },
  {
    name: 'fast QoS 1',
    qos: 1,
    processes: 2,
    clientsPerProcess: 2,
    perClient: 25_000 * SCALE,
    rate: 0,
    window: 500,
  },
  {
    name: '10k msg/s QoS 1',
    qos: 1,
    processes: 2,
    clientsPerProcess: 2,
    perClient: 12_500 * SCALE,
    rate: 2500,
    window: 2500,
  },
  {
    name: '1,000 slow QoS 0',
    qos: 0,
    processes: 2,
    clientsPerProcess: 500,
    perClient: 10 * SCALE,
    rate: 1,
    window: 0,
  },
  {
    name: '1,000 slow QoS 1',
    qos: 1,
    processes: 2,
    clientsPerProcess: 500,
    perClient: 10 * SCALE,
    rate: 1,
    window: 1,
  },
];

interface Stellwerk {
  server: ServerProcess;
  db: pg.Client;
  mqttPort: number;
  connectorId: string;
  credentials: { username: string; password: string };
  live: {
    received: number;
    latencies: number[];
    toArrival: number[];
    fromArrival: number[];
    /** BENCH_DEBUG: [published at, visible latency, publish → received] of packets over 10 ms. */
    slow: Array<[number, number, number]>;
    dropped: number;
  };
}

async function stellwerkRun(s: Scenario, w: Stellwerk) {
  const expected = s.processes * s.clientsPerProcess * s.perClient;
  const maxId = async () =>
    BigInt((await w.db.query<{ id: string | null }>('SELECT max(id) AS id FROM packets')).rows[0]!.id ?? '0');
  const cursor = async () =>
    BigInt(
      (
        await w.db.query<{ v: string | null }>(
          `SELECT value #>> '{}' AS v FROM system_settings WHERE key = 'ingest_cursor'`,
        )
      ).rows[0]?.v ?? '0',
    );
  const startId = await maxId();
  const arrivalBefore = await arrivalBuckets(w.server.baseUrl);
  const groupsBefore = await metric(w.server.baseUrl, 'stellwerk_packet_spool_group_size_count');
  const shedBefore = await metric(w.server.baseUrl, 'stellwerk_live_shed_total');
  w.live.received = 0;
  w.live.latencies = [];
  w.live.toArrival = [];
  w.live.fromArrival = [];
  w.live.slow = [];
  const twins = new TwinProbe(w.db, w.server.baseUrl);
  await twins.begin();
  const pub = await publish(s, {
    url: `mqtt://127.0.0.1:${w.mqttPort}`,
    username: w.credentials.username,
    password: w.credentials.password,
    topic: `connectors/${w.connectorId}/devices/{device}/up`,
  });
  let durableAt = 0;
  let parsedAt = 0;
  let stored = 0n;
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    stored = (await maxId()) - startId;
    if (!durableAt && stored >= BigInt(expected)) durableAt = now();
    if (durableAt && (await cursor()) - startId >= BigInt(expected)) {
      parsedAt = now();
      break;
    }
    await sleep(20);
  }
  const twinFigures = await twins.finish(pub.firedAt, parsedAt);
  // Where the tail comes from: the worst latency per tenth of the run, in arrival order.
  const tenths = (values: number[]) =>
    Array.from({ length: 10 }, (_, i) =>
      // A loop, not Math.max(...slice): a soak collects millions of values, beyond the argument limit.
      values
        .slice((i * values.length) / 10, ((i + 1) * values.length) / 10)
        .reduce((max, v) => (v > max ? v : max), 0)
        .toFixed(0),
    ).join(' ');
  debug(`worst visible per tenth: ${tenths(w.live.latencies)}; worst durable: ${tenths(pub.latencies)}`);
  debug(
    `visible split at the broker's receive time (ms clock): publish→received p99 ${ms(pct(w.live.toArrival, 99))}, received→bench p99 ${ms(pct(w.live.fromArrival, 99))}`,
  );
  debug(`visible over 10 ms, by 10 ms of publish time: ${slowClusters(w.live.slow)}`);
  const arrivalToPush = await arrivalBuckets(w.server.baseUrl);
  const groups = (await metric(w.server.baseUrl, 'stellwerk_packet_spool_group_size_count')) - groupsBefore;
  const shed = (await metric(w.server.baseUrl, 'stellwerk_live_shed_total')) - shedBefore;
  debug(
    `spool groups (one write + fdatasync each): ${groups}, ${(expected / Math.max(1, groups)).toFixed(1)} packets per group`,
  );
  return {
    expected,
    acked: pub.acked,
    stored: Number(stored),
    durablePerSecond:
      s.qos === 1
        ? rate(pub.acked, pub.finishedAt - pub.firedAt)
        : rate(Number(stored), durableAt - pub.firedAt),
    parsedPerSecond: parsedAt ? rate(expected, parsedAt - pub.firedAt) : NaN,
    durableP50: pct(pub.latencies, 50),
    durableP99: pct(pub.latencies, 99),
    visibleP50: pct(w.live.latencies, 50),
    visibleP99: pct(w.live.latencies, 99),
    liveReceived: w.live.received,
    shed,
    arrivalToPush: [...arrivalToPush].map(([le, n]) => [le, n - (arrivalBefore.get(le) ?? 0)] as const),
    twins: twinFigures,
  };
}

/** The server's own share of the visible latency: `stellwerk_live_arrival_to_push_seconds` buckets (le → count). */
async function arrivalBuckets(baseUrl: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const buckets = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith('stellwerk_live_arrival_to_push_seconds_bucket')) continue;
    const le = /le="([^"]+)"/.exec(line)?.[1];
    if (le) buckets.set(le, (buckets.get(le) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return buckets;
}

async function peakRss(pid: number): Promise<{ peakMb: number; nowMb: number }> {
  const status = await fs.readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { peakMb: Math.round(kb('VmHWM') / 1024), nowMb: Math.round(kb('VmRSS') / 1024) };
}

async function setUpStellwerk(dir: string): Promise<Stellwerk> {
  const embedded = new EmbeddedDatabase({
    dataDir: path.join(dir, 'pg'),
    port: 0,
    database: 'stellwerk',
    log: pino({ level: 'warn' }),
  });
  const url = await embedded.start();
  process.once('exit', () => void embedded.stop());
  cleanups.push(() => embedded.stop());
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
      // Compare priorities without editing the server's default (ADR 0103).
      ...(process.env.BENCH_WORKER_NICE
        ? { STELLWERK_INGEST_WORKER_NICE: process.env.BENCH_WORKER_NICE }
        : {}),
    },
    120_000,
  );
  cleanups.unshift(async () => void (await server.stop('SIGTERM')));
  const call = async <T>(route: string, body: unknown, token?: string) => {
    const response = await fetch(`${server.baseUrl}${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${route}: ${response.status} ${await response.text()}`);
    return (await response.json()) as T;
  };
  const { token, user } = await call<{ token: string; user: { accountId: string } }>(
    '/xapi/v1/auth/login',
    ADMIN,
  );
  const connector = await call<{ id: string; credentials: { username: string; password: string } }>(
    '/xapi/v1/connectors',
    { title: 'bench', type: 'mqtt-broker' },
    token,
  );
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  // Devices and their JSON driver straight into the tables: the bench measures ingest, not CRUD.
  const driver = await db.query<{ id: string }>(
    `INSERT INTO device_drivers (id, account_id, title, description, shared, parser, target_variables, health_config, created_at, updated_at)
     VALUES (gen_random_uuid(), $1, 'bench json', '', false, '{"type":"json"}', '[]', '{"rules":[]}', now(), now()) RETURNING id`,
    [user.accountId],
  );
  const keys = deviceKeys();
  // Each device carries a referenceId: dynamic data routing sends its states to the twin with the same one.
  const devices = await db.query<{ id: string }>(
    `INSERT INTO virtual_devices (id, account_id, connector_id, driver_id, device_id, title, description, tags, groups,
        key_value_data, activation_method, skip_frame_counter_check, health_state, reference_id, created_at, updated_at)
     SELECT gen_random_uuid(), $1, $2, $3, k, k, '', '{}', '{}', '{}', 'OTAA', false, 'Unknown', r, now(), now()
       FROM unnest($4::text[], $5::text[]) AS d(k, r) RETURNING id`,
    [user.accountId, connector.id, driver.rows[0]!.id, keys, keys.map(referenceIdOf)],
  );
  const t0 = now();
  const twins = TWINS ? await createTwins(server.baseUrl, token, keys) : 0;
  console.log(
    `${keys.length} devices; ${twins} digital twins with one dynamic-routing state each, created through the XAPI in ${((now() - t0) / 1000).toFixed(1)} s${TWINS ? '' : ' (BENCH_TWINS=0)'}`,
  );
  const live = {
    received: 0,
    latencies: [] as number[],
    toArrival: [] as number[],
    fromArrival: [] as number[],
    slow: [] as Array<[number, number, number]>,
    dropped: 0,
  };
  const socket = new WebSocket(`ws://127.0.0.1:${server.httpPort}/xapi/v1/live`, [
    'stellwerk.live.v1',
    `bearer.${token}`,
  ]);
  await new Promise((resolve, reject) => (socket.once('open', resolve), socket.once('error', reject)));
  socket.on('message', (data: Buffer) => {
    const m = JSON.parse(data.toString()) as {
      type: string;
      count?: number;
      packets?: Array<{ receivedAt?: string; states?: { t?: number } }>;
    };
    if (m.type === 'packets') {
      const at = now();
      for (const p of m.packets ?? []) {
        if (typeof p.states?.t !== 'number') continue;
        live.received++;
        live.latencies.push(at - p.states.t);
        // The broker's receive time (ms): splits the latency into before and after the server got it.
        const arrived = Date.parse(p.receivedAt ?? '');
        live.toArrival.push(arrived - p.states.t);
        live.fromArrival.push(at - arrived);
        if (process.env.BENCH_DEBUG && at - p.states.t > 10)
          live.slow.push([p.states.t, at - p.states.t, arrived - p.states.t]);
      }
    } else if (m.type === 'dropped') live.dropped += m.count ?? 0;
  });
  const ids = devices.rows.map((r) => r.id);
  for (let i = 0; i < ids.length; i += 1000)
    socket.send(JSON.stringify({ subscribe: { deviceIds: ids.slice(i, i + 1000) } }));
  cleanups.unshift(async () => socket.close());
  return { server, db, mqttPort, connectorId: connector.id, credentials: connector.credentials, live };
}

/** Groups slow packets by when they were published, to line them up with server-side events. */
function slowClusters(slow: Array<[number, number, number]>): string {
  const groups = new Map<number, { n: number; worst: number; toArrival: number }>();
  for (const [t, latency, toArrival] of slow) {
    const key = Math.floor(t / 10) * 10;
    const g = groups.get(key) ?? { n: 0, worst: 0, toArrival: 0 };
    g.n++;
    g.worst = Math.max(g.worst, latency);
    g.toArrival = Math.max(g.toArrival, toArrival);
    groups.set(key, g);
  }
  return [...groups]
    .sort(([a], [b]) => a - b)
    .map(
      ([t, g]) =>
        `${new Date(t).toISOString().slice(17, 23)} n=${g.n} worst=${g.worst.toFixed(0)} toArrival=${g.toArrival.toFixed(0)}`,
    )
    .join('; ');
}

const cleanups: Array<() => Promise<void> | void> = [];

async function main(): Promise<void> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'stellwerk-bench-'));
  await fs.chmod(dir, 0o755);
  console.log(`bench:ingest on ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}), scale ${SCALE}`);
  const mosquitto = await startMosquitto(dir);
  cleanups.push(() => mosquitto.stop());
  const w = await setUpStellwerk(dir);
  try {
    if (WARM_UP_SECONDS > 0) {
      const warmUp = SCENARIOS.find((x) => x.name.startsWith('10k'))!;
      const r = await stellwerkRun(
        { ...warmUp, name: 'warm-up', perClient: warmUp.rate * WARM_UP_SECONDS },
        w,
      );
      console.log(
        `warm-up (not measured): ${r.expected.toLocaleString('en')} messages at 10,000 msg/s QoS 1, ${r.stored} stored${Number.isNaN(r.parsedPerSecond) ? ', not all parsed within 60 s' : ', all parsed'}`,
      );
    }
    for (const s of SCENARIOS.filter((x) => x.name.includes(ONLY))) {
      debug(`${s.name}: mosquitto`);
      const m = await mosquittoRun(s, mosquitto.port);
      debug(`${s.name}: stellwerk`);
      const r = await stellwerkRun(s, w);
      const ratio = r.durablePerSecond / m.perSecond;
      console.log(
        `\n## ${s.name}: ${s.processes} processes × ${s.clientsPerProcess} clients × ${s.perClient} messages${s.rate ? ` at ${s.rate}/s each` : ''}`,
      );
      console.log(
        `  mosquitto pub→sub      ${m.perSecond} msg/s (${m.received}/${m.expected}), latency p50 ${ms(m.p50)} p99 ${ms(m.p99)}`,
      );
      console.log(
        `  stellwerk durable      ${r.durablePerSecond} msg/s (stored ${r.stored}/${r.expected}${s.qos ? `, acked ${r.acked}` : ''}) = ${(ratio * 100).toFixed(0)}% of mosquitto`,
      );
      console.log(`  stellwerk parsed e2e   ${r.parsedPerSecond} msg/s`);
      if (s.qos === 1)
        console.log(`  publish→durable        p50 ${ms(r.durableP50)} p99 ${ms(r.durableP99)} (PUBACK)`);
      console.log(
        `  publish→state visible  p50 ${ms(r.visibleP50)} p99 ${ms(r.visibleP99)} (live WebSocket, ${r.liveReceived} received, ${w.live.dropped} dropped so far)`,
      );
      const shown = r.arrivalToPush.find(([le]) => le === '+Inf')?.[1] ?? 0;
      const within = (le: string) => r.arrivalToPush.find(([l]) => l === le)?.[1] ?? 0;
      if (shown > 0)
        console.log(
          `  server arrival→push    ${((100 * within('0.001')) / shown).toFixed(1)}% within 1 ms, ${((100 * within('0.01')) / shown).toFixed(2)}% within 10 ms (stellwerk_live_arrival_to_push_seconds, ${shown} packets; ${r.shed} left to the worker while overloaded)`,
        );
      printTwinFigures(r.twins, r.expected);
    }
    if (SOAK_SECONDS > 0) await soak(w);
    const left = await backlog(w.db);
    const written = await metric(w.server.baseUrl, 'stellwerk_timeseries_points_written_total');
    console.log(
      `\ntime-series writer at the end: backlog ${left.points} points (${left.rows} outbox rows), ${written} points written in total`,
    );
    if (process.env.BENCH_SERVER_LOG) await fs.writeFile(process.env.BENCH_SERVER_LOG, w.server.output());
    const rss = await peakRss(w.server.pid);
    console.log(`\nstellwerk server process: peak RSS ${rss.peakMb} MB, now ${rss.nowMb} MB`);
  } finally {
    await w.db.end();
    for (const cleanup of cleanups) await cleanup();
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/**
 * Half load (default: half of the 10,000 msg/s scenario; BENCH_SOAK_RATE sets another total rate) for
 * SOAK_SECONDS; RSS sampled every 30 s must stay flat.
 */
async function soak(w: Stellwerk): Promise<void> {
  const seconds = SOAK_SECONDS;
  const total = Number(process.env.BENCH_SOAK_RATE ?? 5000);
  const perClient = Math.round(total / 4);
  const s: Scenario = {
    name: 'soak',
    qos: 1,
    processes: 2,
    clientsPerProcess: 2,
    perClient: perClient * seconds,
    rate: perClient,
    window: 2 * perClient,
  };
  console.log(`\n## soak: ${(4 * perClient).toLocaleString('en')} msg/s QoS 1 for ${seconds} s`);
  const samples: string[] = [];
  // The main thread's V8 heap beside RSS: tells a growing heap from allocator or worker growth.
  const heap: string[] = [];
  const timer = setInterval(() => {
    void peakRss(w.server.pid).then((r) => samples.push(`${r.nowMb}`));
    void metric(w.server.baseUrl, 'stellwerk_nodejs_heap_size_used_bytes').then((b) =>
      heap.push((b / 2 ** 20).toFixed(0)),
    );
  }, 30_000);
  const r = await stellwerkRun(s, w);
  clearInterval(timer);
  console.log(
    `  durable ${r.durablePerSecond} msg/s, p99 durable ${ms(r.durableP99)}, p99 visible ${ms(r.visibleP99)}`,
  );
  printTwinFigures(r.twins, r.expected);
  console.log(`  RSS every 30 s (MB): ${samples.join(' ')}`);
  console.log(`  main thread's heap used every 30 s (MB): ${heap.join(' ')}`);
}

main().then(
  () => process.exit(0),
  async (error: unknown) => {
    console.error(error);
    for (const cleanup of cleanups) await Promise.resolve(cleanup()).catch(() => undefined);
    process.exit(1);
  },
);
