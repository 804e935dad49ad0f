import { fork, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import mqtt from 'mqtt';
import pg from 'pg';
import pino from 'pino';
import WebSocket from 'ws';
import { EmbeddedDatabase } from '../server/src/platform/db/embedded-postgres.js';
import { REPO_ROOT, startServer, type ServerProcess } from '../test/integration/support/server-process.js';
import type { PublisherJob } from './publisher.js';

/**
 * `npm run bench:ingest` — not a test. Same load against raw Mosquitto (pub → sub) and against
 * Stellwerk (publish → durable → parsed → state visible on the live WebSocket), on this machine.
 * Scale with BENCH_SCALE (default 1), add a soak with BENCH_SOAK_SECONDS (e.g. 600). docs/performance.md.
 */

const SCALE = Number(process.env.BENCH_SCALE ?? 1);
const SOAK_SECONDS = Number(process.env.BENCH_SOAK_SECONDS ?? 0);
/** Runs only the scenarios whose name contains this text (e.g. `QoS 1`). */
const ONLY = process.env.BENCH_ONLY ?? '';
const debug = (text: string) =>
  process.env.BENCH_DEBUG && console.log(`  [${new Date().toISOString()}] ${text}`);
const ADMIN = { email: 'bench@stellwerk.test', password: 'bench password 123' };

interface Scenario {
  name: string;
  qos: 0 | 1;
  processes: number;
  clientsPerProcess: number;
  perClient: number;
  rate: number;
  window: number;
}

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

const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (values: number[], p: number) => {
  if (values.length === 0) return NaN;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};
const ms = (v: number) => (Number.isFinite(v) ? `${v.toFixed(1)} ms` : '—');
const rate = (n: number, millis: number) => Math.round((n * 1000) / Math.max(1, millis));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

interface PublisherResult {
  sent: number;
  acked: number;
  startedAt: number;
  finishedAt: number;
  latencies: number[];
}

/** Starts the scenario's publisher processes, waits until all clients are connected, then fires. */
async function publish(
  s: Scenario,
  base: Omit<PublisherJob, 'clients' | 'perClient' | 'rate' | 'window' | 'qos' | 'devicePrefix'>,
) {
  const children: ChildProcess[] = [];
  const results: Array<Promise<PublisherResult>> = [];
  const ready: Array<Promise<void>> = [];
  for (let p = 0; p < s.processes; p++) {
    const job: PublisherJob = {
      ...base,
      devicePrefix: `${s.clientsPerProcess > 10 ? 'slow' : 'fast'}${p}`,
      clients: s.clientsPerProcess,
      perClient: s.perClient,
      rate: s.rate,
      window: s.window,
      qos: s.qos,
    };
    const child = fork(path.join(REPO_ROOT, 'bench/publisher.ts'), [JSON.stringify(job)], {
      execArgv: ['--import', 'tsx'],
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
  const firedAt = now();
  for (const child of children) child.send('go');
  const all = await Promise.all(results);
  return {
    firedAt,
    sent: all.reduce((n, r) => n + r.sent, 0),
    acked: all.reduce((n, r) => n + r.acked, 0),
    finishedAt: Math.max(...all.map((r) => r.finishedAt)),
    latencies: all.flatMap((r) => r.latencies),
  };
}

async function startMosquitto(dir: string): Promise<{ port: number; stop: () => void }> {
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
    if (open) return { port, stop: () => child.kill('SIGTERM') };
    await sleep(50);
  }
  throw new Error('mosquitto did not start');
}

async function mosquittoRun(s: Scenario, port: number) {
  const expected = s.processes * s.clientsPerProcess * s.perClient;
  const sub = await mqtt.connectAsync(`mqtt://127.0.0.1:${port}`, { clientId: `bench-sub-${Date.now()}` });
  await sub.subscribeAsync('bench/#', { qos: s.qos });
  let received = 0;
  let last = 0;
  const latencies: number[] = [];
  sub.on('message', (_topic, payload) => {
    received++;
    last = now();
    latencies.push(last - (JSON.parse(payload.toString()) as { t: number }).t);
  });
  const pub = await publish(s, { url: `mqtt://127.0.0.1:${port}`, topic: 'bench/{device}/up' });
  debug(`published ${pub.sent}, acked ${pub.acked}; received ${received}`);
  const deadline = Date.now() + 30_000;
  while (received < expected && Date.now() < deadline) await sleep(50);
  debug(`received ${received}`);
  await sub.endAsync(true);
  return {
    expected,
    received,
    perSecond: rate(received, last - pub.firedAt),
    p50: pct(latencies, 50),
    p99: pct(latencies, 99),
  };
}

interface Stellwerk {
  server: ServerProcess;
  db: pg.Client;
  mqttPort: number;
  connectorId: string;
  credentials: { username: string; password: string };
  live: { received: number; latencies: number[]; dropped: number };
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
  w.live.received = 0;
  w.live.latencies = [];
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
  };
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
  const keys = [
    ...Array.from({ length: 2 }, (_, p) => Array.from({ length: 2 }, (_, c) => `fast${p}-${c}`)).flat(),
    ...Array.from({ length: 2 }, (_, p) => Array.from({ length: 500 }, (_, c) => `slow${p}-${c}`)).flat(),
  ];
  const devices = await db.query<{ id: string }>(
    `INSERT INTO virtual_devices (id, account_id, connector_id, driver_id, device_id, title, description, tags, groups,
        key_value_data, activation_method, skip_frame_counter_check, health_state, created_at, updated_at)
     SELECT gen_random_uuid(), $1, $2, $3, k, k, '', '{}', '{}', '{}', 'OTAA', false, 'Unknown', now(), now()
       FROM unnest($4::text[]) AS k RETURNING id`,
    [user.accountId, connector.id, driver.rows[0]!.id, keys],
  );
  const live = { received: 0, latencies: [] as number[], dropped: 0 };
  const socket = new WebSocket(`ws://127.0.0.1:${server.httpPort}/xapi/v1/live`, [
    'stellwerk.live.v1',
    `bearer.${token}`,
  ]);
  await new Promise((resolve, reject) => (socket.once('open', resolve), socket.once('error', reject)));
  socket.on('message', (data: Buffer) => {
    const m = JSON.parse(data.toString()) as {
      type: string;
      count?: number;
      packets?: Array<{ states?: { t?: number } }>;
    };
    if (m.type === 'packets') {
      const at = now();
      for (const p of m.packets ?? []) {
        if (typeof p.states?.t !== 'number') continue;
        live.received++;
        live.latencies.push(at - p.states.t);
      }
    } else if (m.type === 'dropped') live.dropped += m.count ?? 0;
  });
  const ids = devices.rows.map((r) => r.id);
  for (let i = 0; i < ids.length; i += 1000)
    socket.send(JSON.stringify({ subscribe: { deviceIds: ids.slice(i, i + 1000) } }));
  cleanups.unshift(async () => socket.close());
  return { server, db, mqttPort, connectorId: connector.id, credentials: connector.credentials, live };
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
    }
    if (SOAK_SECONDS > 0) await soak(w);
    const rss = await peakRss(w.server.pid);
    console.log(`\nstellwerk server process: peak RSS ${rss.peakMb} MB, now ${rss.nowMb} MB`);
  } finally {
    await w.db.end();
    for (const cleanup of cleanups) await cleanup();
  }
}

/** Half of the fast QoS 1 rate, for SOAK_SECONDS; RSS sampled every 30 s must stay flat. */
async function soak(w: Stellwerk): Promise<void> {
  const seconds = SOAK_SECONDS;
  const s: Scenario = {
    name: 'soak',
    qos: 1,
    processes: 2,
    clientsPerProcess: 2,
    perClient: 1250 * seconds,
    rate: 1250,
    window: 2500,
  };
  console.log(`\n## soak: 5,000 msg/s QoS 1 for ${seconds} s`);
  const samples: string[] = [];
  const timer = setInterval(() => void peakRss(w.server.pid).then((r) => samples.push(`${r.nowMb}`)), 30_000);
  const r = await stellwerkRun(s, w);
  clearInterval(timer);
  console.log(
    `  durable ${r.durablePerSecond} msg/s, p99 durable ${ms(r.durableP99)}, p99 visible ${ms(r.visibleP99)}`,
  );
  console.log(`  RSS every 30 s (MB): ${samples.join(' ')}`);
}

main().then(
  () => process.exit(0),
  async (error: unknown) => {
    console.error(error);
    for (const cleanup of cleanups) await Promise.resolve(cleanup()).catch(() => undefined);
    process.exit(1);
  },
);
