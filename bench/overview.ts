import fs from 'node:fs/promises';
import os from 'node:os';
import pg from 'pg';
import { startBenchDatabase } from './bench-database.js';
import { startServer } from '../test/integration/support/server-process.js';
import { ms, now, pct } from './load.js';

/**
 * `npm run bench:overview` — not a test. GET /xapi/v1/overview on an account of site size, seeded
 * straight into the tables: BENCH_DEVICES (default 100,000) devices in five health states, 20
 * connectors with two hours of minute buckets, BENCH_PACKETS (default 2,000,000) stored packets
 * (the overview must not read them), BENCH_ALARMS (default 20,000) alarm entries of which 2 % open,
 * 200 gateways. Prints p50/p95 of the whole request over BENCH_ROUNDS (default 30) and the plans of
 * the device and ingest queries. docs/overview.md has the figures.
 */

const DEVICES = Number(process.env.BENCH_DEVICES ?? 100_000);
const PACKETS = Number(process.env.BENCH_PACKETS ?? 2_000_000);
const ALARMS = Number(process.env.BENCH_ALARMS ?? 20_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 30);
const ADMIN = { email: 'bench@stellwerk.test', password: 'bench password 123' };

async function main() {
  const { dir, url, embedded } = await startBenchDatabase('overview');
  const server = await startServer(
    {
      DATABASE_URL: url,
      STELLWERK_DATA_DIR: dir,
      STELLWERK_ADMIN_EMAIL: ADMIN.email,
      STELLWERK_ADMIN_PASSWORD: ADMIN.password,
      STELLWERK_RATE_LIMIT_MAX: '1000000',
    },
    120_000,
  );
  const db = new pg.Client({ connectionString: url });
  db.on('error', () => undefined);
  try {
    const login = await fetch(`${server.baseUrl}/xapi/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(ADMIN),
    });
    const { token, user } = (await login.json()) as { token: string; user: { accountId: string } };
    const account = user.accountId;
    await db.connect();
    const t0 = now();
    const connectors = await db.query<{ id: string }>(
      `INSERT INTO connectors (id, account_id, title, type, active, config, created_at, updated_at)
       SELECT gen_random_uuid(), $1, 'bench ' || n, 'webhook-in', n % 5 <> 0, '{}', now(), now()
         FROM generate_series(1, 20) AS n RETURNING id`,
      [account],
    );
    const ids = connectors.rows.map((r) => r.id);
    await db.query(
      `INSERT INTO virtual_devices (id, account_id, connector_id, device_id, title, description, tags, groups,
          key_value_data, activation_method, skip_frame_counter_check, health_state, last_seen, created_at, updated_at)
       SELECT gen_random_uuid(), $1, ($2::uuid[])[1 + n % 20], 'd' || n, 'device ' || n, '', '{}', '{}', '{}', 'OTAA', false,
              (ARRAY['Healthy','Healthy','Healthy','Warning','Critical'])[1 + n % 5],
              CASE WHEN n % 50 = 0 THEN NULL ELSE now() END, now(), now()
         FROM generate_series(1, $3::int) AS n`,
      [account, ids, DEVICES],
    );
    await db.query(
      `INSERT INTO packets (connector_id, device_key, received_at, payload, source)
       SELECT ($1::uuid[])[1 + n % 20], 'd' || (n % $3::int), now() - make_interval(secs => ($2::int - n) / 100.0), '\\x7b7d', 'mqtt'
         FROM generate_series(1, $2::int) AS n`,
      [ids, PACKETS, DEVICES],
    );
    await db.query(
      `INSERT INTO connector_packet_minutes (connector_id, minute, packets_in, packets_failed)
       SELECT c, date_trunc('minute', now()) - make_interval(mins => m), 1000 + m, m % 3
         FROM unnest($1::uuid[]) AS c, generate_series(0, 119) AS m`,
      [ids],
    );
    await db.query(
      `INSERT INTO alarm_logs (id, account_id, category, message, status, severity, severity_rank, last_seen_at, details, created_at, updated_at)
       SELECT gen_random_uuid(), $1, 'Rule', 'alarm ' || n, CASE WHEN n % 50 = 0 THEN 'open' ELSE 'closed' END,
              (ARRAY['info','warning','minor','major','critical'])[1 + n % 5], 1 + n % 5,
              now() - make_interval(secs => n), '{}', now(), now()
         FROM generate_series(1, $2::int) AS n`,
      [account, ALARMS],
    );
    await db.query(
      `INSERT INTO gateways (id, account_id, eui, title, tags, status, last_seen_at, created_at, updated_at)
       SELECT gen_random_uuid(), $1, lpad(to_hex(n), 16, '0'), 'gateway ' || n, '{}',
              CASE WHEN n % 10 = 0 THEN 'offline' ELSE 'online' END, now(), now(), now()
         FROM generate_series(1, 200) AS n`,
      [account],
    );
    await db.query('ANALYZE');
    console.log(
      `Stellwerk overview bench — ${os.cpus().length} CPUs; seeded ${DEVICES.toLocaleString('en-US')} devices, ` +
        `${PACKETS.toLocaleString('en-US')} packets, ${ALARMS.toLocaleString('en-US')} alarms in ${ms(now() - t0)}\n`,
    );
    const times: number[] = [];
    let body = '';
    for (let i = 0; i < ROUNDS; i++) {
      const start = now();
      const response = await fetch(`${server.baseUrl}/xapi/v1/overview`, {
        headers: { authorization: `Bearer ${token}` },
      });
      body = await response.text();
      if (!response.ok) throw new Error(`overview: ${response.status} ${body}`);
      times.push(now() - start);
    }
    const reply = JSON.parse(body) as {
      devices: { total: number };
      ingest: { packetsIn: number };
      alarms: { open: number };
    };
    console.log(
      `GET /xapi/v1/overview: p50 ${ms(pct(times, 50))}, p95 ${ms(pct(times, 95))} over ${ROUNDS} requests ` +
        `(${reply.devices.total} devices, ${reply.ingest.packetsIn} packets in the hour, ${reply.alarms.open} open alarms)\n`,
    );
    const plan = async (title: string, sql: string, params: unknown[]) => {
      const rows = await db.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${sql}`,
        params,
      );
      console.log(`${title}\n${rows.rows.map((r) => `  ${r['QUERY PLAN']}`).join('\n')}\n`);
    };
    await plan(
      'Devices by health',
      `SELECT (CASE WHEN d.last_seen IS NULL THEN 'Unknown' ELSE d.health_state END) AS state, count(*)::int
         FROM virtual_devices d WHERE d.account_id = $1 AND TRUE GROUP BY 1 ORDER BY 2 DESC, 1`,
      [account],
    );
    await plan(
      'Packets per minute, last hour',
      `SELECT m.minute, sum(m.packets_in)::int, sum(m.packets_failed)::int FROM connectors c
         JOIN connector_packet_minutes m ON m.connector_id = c.id AND m.minute >= $2 AND m.minute < $3
        WHERE c.account_id = $1 GROUP BY m.minute`,
      [account, new Date(Date.now() - 3_600_000), new Date()],
    );
    await plan(
      'Open alarms by severity',
      `SELECT a.severity, count(*)::int FROM alarm_logs a WHERE a.account_id = $1 AND a.status = 'open' AND (TRUE) GROUP BY a.severity`,
      [account],
    );
  } finally {
    await db.end().catch(() => undefined);
    await server.stop('SIGTERM').catch(() => undefined);
    await embedded.stop().catch(() => undefined);
    await fs.rm(dir, { recursive: true, force: true });
  }
}

await main();
