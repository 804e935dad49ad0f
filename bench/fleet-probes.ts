import fs from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { now } from './load.js';

/**
 * Measuring helpers of `npm run bench:fleet` (bench/fleet.ts): CPU time per process from /proc, and
 * the plain-`COPY` baseline of the rows a message leaves behind.
 */

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** utime + stime of a process (all its threads), and with `children` also of its waited-for children. */
async function cpuTicks(pid: number, children = false): Promise<number> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  // The command name may hold spaces; fields count from after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the name: state(0) ppid(1) … utime(11) stime(12) cutime(13) cstime(14).
  const own = Number(fields[11] ?? 0) + Number(fields[12] ?? 0);
  return children ? own + Number(fields[13] ?? 0) + Number(fields[14] ?? 0) : own;
}

async function childPids(parent: number): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await fs.readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid === parent) pids.push(Number(entry));
  }
  return pids;
}

/**
 * CPU seconds of PostgreSQL: the postmaster, its live backends and background processes, and the
 * finished ones it has waited for (cutime/cstime), so a backend that exits keeps counting.
 */
export async function postgresCpuSeconds(postmaster: number): Promise<number> {
  let ticks = await cpuTicks(postmaster, true);
  for (const pid of await childPids(postmaster)) ticks += await cpuTicks(pid);
  return ticks / TICKS_PER_SECOND;
}

export async function processCpuSeconds(pid: number): Promise<number> {
  return (await cpuTicks(pid)) / TICKS_PER_SECOND;
}

/** The postmaster of the data directory (the one process whose command line names it). */
export async function postmasterOf(dataDir: string): Promise<number> {
  const pid = Number((await fs.readFile(`${dataDir}/postmaster.pid`, 'utf8')).split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`no postmaster.pid in ${dataDir}`);
  return pid;
}

export interface CopyBaseline {
  messages: number;
  seconds: number;
  /** Messages per second whose rows (1 packet, `statesPerMessage` points) a plain COPY writes. */
  messagesPerSecond: number;
}

/**
 * What PostgreSQL alone can take on this machine: `COPY` of the rows `messages` fleet messages leave
 * in the same tables — one `packets` row and `statesPerMessage` `ts_points` rows each — from the
 * bench process, in one transaction that is rolled back afterwards (nothing stays behind). The
 * connector and states are real ones of the run, so foreign keys and indexes do the same work.
 */
export async function copyBaseline(
  db: pg.Client,
  connectorId: string,
  stateIds: string[],
  messages: number,
  statesPerMessage: number,
): Promise<CopyBaseline> {
  const devices = Math.max(1, Math.floor(stateIds.length / statesPerMessage));
  const t0 = Date.now();
  const packetRows = function* (): Generator<string> {
    for (let i = 0; i < messages; i++) {
      const t = new Date(t0 + i).toISOString();
      const payload = Buffer.from(`{"a":${t0 + i},"b":${i},"c":${(i % 1000) / 10}}`).toString('hex');
      yield `${connectorId}\tfleet-${i % devices}\t${t}\t\\\\x${payload}\tmqtt\n`;
    }
  };
  const pointRows = function* (): Generator<string> {
    for (let i = 0; i < messages; i++) {
      const t = new Date(t0 + i).toISOString();
      const device = i % devices;
      for (let s = 0; s < statesPerMessage; s++)
        yield `${stateIds[device * statesPerMessage + s]}\t${t}\t${i + s}\t\\N\n`;
    }
  };
  const copy = async (sql: string, rows: () => Generator<string>) => {
    // Chunks of ~1,000 rows: one write per row would measure the stream, not PostgreSQL.
    const chunks = function* () {
      let chunk = '';
      let n = 0;
      for (const row of rows()) {
        chunk += row;
        if (++n % 1000 === 0) {
          yield chunk;
          chunk = '';
        }
      }
      if (chunk) yield chunk;
    };
    await pipeline(Readable.from(chunks()), db.query(copyFrom(sql)));
  };
  await db.query('BEGIN');
  try {
    const began = now();
    await copy(
      'COPY packets (connector_id, device_key, received_at, payload, source) FROM STDIN',
      packetRows,
    );
    await copy('COPY ts_points (state_id, "time", value, text) FROM STDIN', pointRows);
    // Rolled back, not committed: committed packet rows would be picked up by the running ingest.
    // What that leaves out is one WAL flush, a millisecond against seconds of COPY.
    const seconds = (now() - began) / 1000;
    return { messages, seconds, messagesPerSecond: Math.round(messages / seconds) };
  } finally {
    await db.query('ROLLBACK');
  }
}

/** CPU seconds of each thread of a process, summed by thread name (`MainThread`, `WorkerThread`, …). */
export async function threadCpuSeconds(pid: number): Promise<Map<string, number>> {
  const byName = new Map<string, number>();
  for (const tid of await fs.readdir(`/proc/${pid}/task`).catch(() => [])) {
    const name = (await fs.readFile(`/proc/${pid}/task/${tid}/comm`, 'utf8').catch(() => '')).trim();
    const stat = await fs.readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8').catch(() => '');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const seconds = (Number(fields[11] ?? 0) + Number(fields[12] ?? 0)) / TICKS_PER_SECOND;
    byName.set(name, (byName.get(name) ?? 0) + seconds);
  }
  return byName;
}

/**
 * CPU seconds of PostgreSQL's live processes by role: a client backend by its `application_name`
 * (the server names each of its pools), any other process by its backend type. Backends that end
 * between two readings drop out of the difference; `postgresCpuSeconds` keeps the total.
 */
export async function postgresCpuByRole(db: pg.Client): Promise<Map<string, number>> {
  const { rows } = await db.query<{ pid: number; role: string }>(
    `SELECT pid, CASE WHEN backend_type = 'client backend' THEN coalesce(nullif(application_name, ''), 'unnamed')
                      ELSE backend_type END AS role
       FROM pg_stat_activity WHERE pid <> pg_backend_pid()`,
  );
  const byRole = new Map<string, number>();
  for (const { pid, role } of rows)
    byRole.set(role, (byRole.get(role) ?? 0) + (await cpuTicks(pid)) / TICKS_PER_SECOND);
  return byRole;
}

/** `after − before` per key, as cores over `seconds`, largest first, those of at least 0.01. */
export function coresByKey(before: Map<string, number>, after: Map<string, number>, seconds: number): string {
  return [...after]
    .map(([key, v]) => [key, (v - (before.get(key) ?? 0)) / seconds] as const)
    .filter(([, cores]) => cores >= 0.01)
    .sort((a, b) => b[1] - a[1])
    .map(([key, cores]) => `${key} ${cores.toFixed(2)}`)
    .join(', ');
}
