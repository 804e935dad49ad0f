import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { ServerProcess } from '../test/integration/support/server-process.js';
import { postgresCpuSeconds, postmasterOf, processCpuSeconds } from './fleet-probes.js';
import { ms, now, pct } from './load.js';
import { startBenchSite } from './bench-site.js';
import { foldRollups } from '../server/src/timeseries/rollup-fold.js';
import { seedDevices, seedTwins, seedYearOfPoints } from './scale-seed.js';

/**
 * `npm run bench:scale` — not a test. Lists and charts at utility scale: a small account (2,000
 * devices and twins, the baseline) and a large one (BENCH_SCALE_DEVICES, default 100,000 devices and
 * as many twins) in one server, one state of the large account with a year of 1-minute points. Each
 * request runs from BENCH_SCALE_CLIENTS (default 10) concurrent keep-alive clients for
 * BENCH_SCALE_SECONDS (default 20) after VACUUM ANALYZE; the report gives req/s, p50 and p99, and
 * for lists the ratio of the large account's p99 to the small one's. docs/performance.md.
 */

const DEVICES = Number(process.env.BENCH_SCALE_DEVICES ?? 100_000);
const BASELINE = 2000;
const CLIENTS = Number(process.env.BENCH_SCALE_CLIENTS ?? 10);
const SECONDS = Number(process.env.BENCH_SCALE_SECONDS ?? 20);
// Substrings of request labels, separated by "|": only the requests whose label contains one of them.
const ONLY = process.env.BENCH_SCALE_ONLY?.split('|');
const selected = (label: string) => !ONLY || ONLY.some((part) => label.includes(part));
// Keeps server and database running after the report (their addresses printed), to EXPLAIN by hand.
const HOLD = process.env.BENCH_SCALE_HOLD === '1';
const ADMIN = { email: 'bench@stellwerk.test', password: 'bench password 123' };

interface Tenant {
  accountId: string;
  headers: Record<string, string>;
}

const cleanups: Array<() => Promise<void> | void> = [];

async function call<T>(
  server: ServerProcess,
  method: string,
  route: string,
  headers: object,
  body?: unknown,
) {
  const response = await fetch(`${server.baseUrl}${route}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

async function setUp(dir: string) {
  const { url, server } = await startBenchSite(dir, ADMIN, cleanups, {
    STELLWERK_RATE_LIMIT_MAX: '10000000',
  });
  const login = await call<{ token: string; user: { accountId: string } }>(
    server,
    'POST',
    '/xapi/v1/auth/login',
    {},
    ADMIN,
  );
  const admin = { authorization: `Bearer ${login.token}` };
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  cleanups.unshift(() => db.end());
  const tenant = async (title: string, devices: number): Promise<Tenant> => {
    const account = await call<{ id: string }>(server, 'POST', '/xapi/v1/accounts', admin, {
      title,
      parentId: login.user.accountId,
    });
    const key = await call<{ key: string }>(server, 'POST', '/xapi/v1/api-keys', admin, {
      title: `${title} bench`,
      permissions: ['all.manage'],
      accountId: account.id,
    });
    const headers = { 'x-api-key': key.key };
    const connector = await call<{ id: string }>(server, 'POST', '/xapi/v1/connectors', headers, {
      title: 'meters',
      type: 'mqtt-broker',
    });
    const t0 = now();
    await seedDevices(db, account.id, connector.id, devices);
    await seedTwins(db, account.id, devices);
    console.log(
      `  ${title}: ${devices.toLocaleString('en')} devices and twins in ${((now() - t0) / 1000).toFixed(1)} s`,
    );
    return { accountId: account.id, headers };
  };
  console.log('Seeding…');
  const small = await tenant('Small site', BASELINE);
  const large = await tenant('Large site', DEVICES);
  const t0 = now();
  const stateId = await seedYearOfPoints(db, large.accountId, new Date());
  console.log(`  a year of 1-minute points (525,600) in ${((now() - t0) / 1000).toFixed(1)} s`);
  const t1 = now();
  const foldPool = new pg.Pool({ connectionString: url, max: 1 });
  // The server's fold job catches up 480 hours a minute; the year is folded here at once.
  await foldRollups(foldPool, new Date(), { maxHours: 24 * 31, maxRounds: 100 }).finally(() =>
    foldPool.end(),
  );
  console.log(`  its hourly rollups folded in ${((now() - t1) / 1000).toFixed(1)} s`);
  await db.query('VACUUM ANALYZE');
  if (HOLD)
    console.log(
      `  database ${url}\n  server ${server.baseUrl}\n  large account ${large.accountId}\n  its API key ${large.headers['x-api-key']}`,
    );
  const postmaster = await postmasterOf(path.join(dir, 'pg', 'postgres'));
  return { server, small, large, stateId, postmaster };
}

interface Result {
  /** CPU milliseconds per request of the server process and of PostgreSQL: what a request costs, whatever else runs. */
  serverCpuMs: number;
  postgresCpuMs: number;
  requests: number;
  errors: number;
  p50: number;
  p99: number;
  perSecond: number;
}

/**
 * One request on a keep-alive agent, read to its end: node:http rather than fetch, whose per-request
 * cost on the same two CPUs would be measured as the server's latency. The body is asked for
 * compressed as a browser asks (the console's own requests).
 */
function request(
  agent: http.Agent,
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: string | undefined,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        agent,
        method,
        headers: { 'accept-encoding': process.env.BENCH_SCALE_ENCODING ?? 'gzip, deflate, br', ...headers },
      },
      (response) => {
        response.on('data', () => undefined);
        response.on('end', () => resolve(response.statusCode ?? 0));
        response.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** CLIENTS closed loops of one request for SECONDS; every answer read to its end. */
async function load(
  { server, postmaster }: { server: ServerProcess; postmaster: number },
  route: string,
  headers: Record<string, string>,
  body?: unknown,
) {
  const latencies: number[] = [];
  let errors = 0;
  const method = body === undefined ? 'GET' : 'POST';
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const allHeaders = { ...(payload === undefined ? {} : { 'content-type': 'application/json' }), ...headers };
  const url = new URL(`${server.baseUrl}${route}`);
  const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS });
  try {
    // Warm-up: plans cached, connections open.
    for (let i = 0; i < 20; i++) await request(agent, url, method, allHeaders, payload);
    const cpuBefore = [await processCpuSeconds(server.pid), await postgresCpuSeconds(postmaster)];
    const began = now();
    const end = began + SECONDS * 1000;
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (now() < end) {
          const t = now();
          const status = await request(agent, url, method, allHeaders, payload);
          if (status === 200) latencies.push(now() - t);
          else errors++;
        }
      }),
    );
    const took = now() - began;
    const perRequest = (seconds: number) => (seconds * 1000) / Math.max(1, latencies.length + errors);
    return {
      serverCpuMs: perRequest((await processCpuSeconds(server.pid)) - cpuBefore[0]!),
      postgresCpuMs: perRequest((await postgresCpuSeconds(postmaster)) - cpuBefore[1]!),
      requests: latencies.length,
      errors,
      p50: pct(latencies, 50),
      p99: pct(latencies, 99),
      perSecond: (latencies.length * 1000) / took,
    } satisfies Result;
  } finally {
    agent.destroy();
  }
}

const chart = (stateId: string, bucket: string | null, days: number) => ({
  query: bucket
    ? `SELECT bucket(${bucket}) AS t, mean(value) AS v WHERE state.id = '${stateId}' AND time >= now() - ${days}d GROUP BY t ORDER BY t LIMIT 5000`
    : `SELECT time, value WHERE state.id = '${stateId}' AND time >= now() - ${days}d ORDER BY time LIMIT 5000`,
});

async function main(): Promise<void> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'stellwerk-bench-scale-'));
  await fs.chmod(dir, 0o777);
  cleanups.push(() => fs.rm(dir, { recursive: true, force: true }));
  const site = await setUp(dir);
  const { small, large, stateId } = site;
  const lastPage = Math.ceil(DEVICES / 50) - 10;
  // The dearest page by number: pages past the middle are read from the end of the order.
  const middlePage = Math.ceil(DEVICES / 100);
  const lists: Array<[string, string]> = [
    ['devices, page 1 (pageSize=50)', '/xapi/v1/virtual-devices?pageSize=50'],
    ['devices, searchItems=01234', '/xapi/v1/virtual-devices?pageSize=50&searchItems=01234'],
    ['devices, sort=-lastSeen', '/xapi/v1/virtual-devices?pageSize=50&sort=-lastSeen'],
    ['devices, filter tag zone-7', '/xapi/v1/virtual-devices?pageSize=50&filter%5Btag%5D=zone-7'],
    [`devices, page ${lastPage}`, `/xapi/v1/virtual-devices?pageSize=50&page=${lastPage}`],
    [`devices, page ${middlePage} (the middle)`, `/xapi/v1/virtual-devices?pageSize=50&page=${middlePage}`],
    ['devices, sort=healthState', '/xapi/v1/virtual-devices?pageSize=50&sort=healthState'],
    ['devices, sort=-updatedAt page 3', '/xapi/v1/virtual-devices?pageSize=50&page=3&sort=-updatedAt'],
    [
      'devices, filter title "meter 1234,"',
      '/xapi/v1/virtual-devices?pageSize=50&filter%5Btitle%5D=meter%201234%2C',
    ],
    ['devices, searchItems=meter 1234', '/xapi/v1/virtual-devices?pageSize=50&searchItems=meter%201234'],
    ['devices, filter kv zone=7', '/xapi/v1/virtual-devices?pageSize=50&filter%5Bkv.zone%5D=7'],
    ['devices, healthState=Critical', '/xapi/v1/virtual-devices?pageSize=50&healthState=Critical'],
    ['digital twins, default page', '/xapi/v1/digital-twins'],
    ['digital twins, searchItems=1234', '/xapi/v1/digital-twins?searchItems=1234'],
    ['digital twins, searchItems=building 1234', '/xapi/v1/digital-twins?searchItems=building%201234'],
    ['digital twins, sort=-updatedAt', '/xapi/v1/digital-twins?sort=-updatedAt'],
  ];
  const rows: string[] = [];
  const row = (label: string, r: Result, base?: Result) =>
    rows.push(
      `| ${label} | ${r.perSecond.toFixed(0)} | ${ms(r.p50)} | ${ms(r.p99)} | ${base ? `${(r.p99 / base.p99).toFixed(1)}×` : '—'} | ${r.serverCpuMs.toFixed(1)} + ${r.postgresCpuMs.toFixed(1)}${base ? ` (2k: ${base.serverCpuMs.toFixed(1)} + ${base.postgresCpuMs.toFixed(1)})` : ''} |${r.errors ? ` ${r.errors} errors` : ''}`,
    );
  for (const [label, route] of lists) {
    if (!selected(label)) continue;
    // The small account has 40 pages of 50: its pages 38 and 20 stand in for the large account's.
    const smallRoute = route.replace(`page=${lastPage}`, 'page=38').replace(`page=${middlePage}`, 'page=20');
    const base = await load(site, smallRoute, small.headers);
    const result = await load(site, route, large.headers);
    row(label, result, base);
    console.log(rows.at(-1));
  }
  const charts: Array<[string, unknown]> = [
    ['time series, raw last 24 h', chart(stateId, null, 1)],
    ['hourly mean, 30 days', chart(stateId, '1h', 30)],
    ['6-hourly mean, 90 days', chart(stateId, '6h', 90)],
    ['daily mean, 1 year', chart(stateId, '1d', 365)],
  ];
  for (const [label, body] of charts) {
    if (!selected(label)) continue;
    row(label, await load(site, '/xapi/v1/timeseries/query', large.headers, body));
    console.log(rows.at(-1));
  }
  console.log(
    `\n${DEVICES.toLocaleString('en')} devices, ${CLIENTS} clients, ${SECONDS} s per request; ratio = p99 against the ${BASELINE.toLocaleString('en')}-device account\n`,
  );
  console.log(
    '| request | req/s | p50 | p99 | p99 vs 2k | CPU ms per request: server + PostgreSQL |\n|---|---|---|---|---|---|',
  );
  for (const line of rows) console.log(line);
  if (HOLD) await new Promise((resolve) => process.once('SIGINT', resolve));
}

main()
  .catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(async () => {
    for (const cleanup of cleanups) await cleanup();
  });
