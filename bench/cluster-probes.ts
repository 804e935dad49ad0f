import fs from 'node:fs/promises';
import WebSocket from 'ws';
import { postgresCpuSeconds, processCpuSeconds } from './fleet-probes.js';
import { now } from './load.js';

/**
 * Measuring helpers of `npm run bench:cluster` (bench/cluster.ts): the CPU of every process a mode
 * runs (Stellwerk nodes by thread, Redis, HAProxy, PostgreSQL) from /proc, and the console's live
 * socket that times twin state changes.
 */

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** CPU seconds used so far, per process kind; `threads` splits the nodes' time by thread name. */
export interface CpuReading {
  nodes: number;
  redis: number;
  haproxy: number;
  postgres: number;
  /** Main thread (broker, spool, HTTP) as `main`, the others by their name in /proc (`comm`). */
  threads: Map<string, number>;
}

export interface Processes {
  nodes: number[];
  redis?: number;
  haproxy?: number;
  postmaster: number;
}

/**
 * Per-thread CPU of a process. A thread that ended since the last reading is missing from the
 * next one, so a node's per-thread split is only shown, the totals come from the process's own stat.
 */
async function threadSeconds(pid: number, into: Map<string, number>): Promise<void> {
  for (const tid of await fs.readdir(`/proc/${pid}/task`).catch(() => [] as string[])) {
    const stat = await fs.readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8').catch(() => '');
    if (!stat) continue;
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const name = Number(tid) === pid ? 'main' : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const seconds = (Number(fields[11] ?? 0) + Number(fields[12] ?? 0)) / TICKS_PER_SECOND;
    into.set(name, (into.get(name) ?? 0) + seconds);
  }
}

export async function readCpu(p: Processes): Promise<CpuReading> {
  const threads = new Map<string, number>();
  let nodes = 0;
  for (const pid of p.nodes) {
    nodes += await processCpuSeconds(pid);
    await threadSeconds(pid, threads);
  }
  return {
    nodes,
    redis: p.redis ? await processCpuSeconds(p.redis) : 0,
    haproxy: p.haproxy ? await processCpuSeconds(p.haproxy) : 0,
    postgres: await postgresCpuSeconds(p.postmaster),
    threads,
  };
}

/** CPU seconds spent between two readings, per kind. */
export function cpuSpent(before: CpuReading, after: CpuReading): CpuReading {
  const threads = new Map<string, number>();
  for (const [name, seconds] of after.threads) threads.set(name, seconds - (before.threads.get(name) ?? 0));
  return {
    nodes: after.nodes - before.nodes,
    redis: after.redis - before.redis,
    haproxy: after.haproxy - before.haproxy,
    postgres: after.postgres - before.postgres,
    threads,
  };
}

export const cpuTotal = (c: CpuReading) => c.nodes + c.redis + c.haproxy + c.postgres;

/**
 * A console's live socket following twins: each twin state `a` (the device's publish time) pushed
 * to it is timed. In cluster mode it is connected to a node that need not be the processing one,
 * so the figure includes the Redis fanout.
 */
export async function followTwins(
  httpPort: number,
  token: string,
  twinIds: string[],
): Promise<{ latencies: number[]; close: () => void }> {
  const latencies: number[] = [];
  const socket = new WebSocket(`ws://127.0.0.1:${httpPort}/xapi/v1/live`, [
    'stellwerk.live.v1',
    `bearer.${token}`,
  ]);
  await new Promise((resolve, reject) => (socket.once('open', resolve), socket.once('error', reject)));
  socket.on('message', (data: Buffer) => {
    const m = JSON.parse(data.toString()) as {
      type: string;
      states?: Array<{ key: string; value: unknown }>;
    };
    const at = now();
    if (m.type === 'states')
      for (const s of m.states ?? [])
        if (s.key === 'a' && typeof s.value === 'number') latencies.push(at - s.value);
    if (m.type === 'dropped' || m.type === 'error')
      console.log(`live socket: ${data.toString().slice(0, 300)}`);
  });
  for (let i = 0; i < twinIds.length; i += 1000)
    socket.send(JSON.stringify({ subscribe: { twinIds: twinIds.slice(i, i + 1000) } }));
  return { latencies, close: () => socket.close() };
}
