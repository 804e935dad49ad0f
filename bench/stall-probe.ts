import fs from 'node:fs';
import { PerformanceObserver, performance } from 'node:perf_hooks';
import { isMainThread, threadId } from 'node:worker_threads';

/**
 * Loaded into the bench's server to tell why its main thread stalls (docs/performance.md, "Figures
 * with fewer V8 helper threads"):
 *
 *   BENCH_STALL_LOG=/tmp/stalls.log BENCH_SERVER_NODE_ARGS="--import ./bench/stall-probe.ts" \
 *     BENCH_ONLY='10k' BENCH_DEBUG=1 npm run bench:ingest
 *
 * Each line is a time (seconds.millis of the minute, UTC) and either a main-thread stall over 4 ms —
 * how late a 2 ms timer fired, and in that time the thread's CPU and its wait in the run queue — or a
 * garbage collection over 1 ms (any thread). A stall with little CPU and a long run-queue wait is
 * the thread waiting for a CPU, not working; BENCH_DEBUG's slow packets line up with it by time.
 * Linux only (`/proc/thread-self/schedstat`). The probe itself wakes the thread 500 times a second.
 */

const TICK_MS = 2;
const STALL_MS = 4;
const out: string[] = [];
const logFile = process.env.BENCH_STALL_LOG ?? '/tmp/stellwerk-stalls.log';
const origin = performance.timeOrigin;
const who = isMainThread ? 'main' : `worker${threadId}`;
const clock = (ms: number) => new Date(ms).toISOString().slice(17, 23);
// Run time and run-queue wait of this thread so far, in nanoseconds.
const schedstat = () => fs.readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ').map(Number);

if (isMainThread) {
  let last = performance.now();
  let lastCpu = process.threadCpuUsage();
  let lastSched = schedstat();
  const tick = () => {
    const now = performance.now();
    const cpu = process.threadCpuUsage();
    const sched = schedstat();
    const late = now - last - TICK_MS;
    if (late > STALL_MS) {
      const cpuMs = (cpu.user - lastCpu.user + cpu.system - lastCpu.system) / 1000;
      const queuedMs = (sched[1]! - lastSched[1]!) / 1e6;
      out.push(
        `${clock(origin + last)} ${who} stall ${late.toFixed(1)} ms: cpu ${cpuMs.toFixed(1)} ms, run queue ${queuedMs.toFixed(1)} ms`,
      );
    }
    last = now;
    lastCpu = cpu;
    lastSched = sched;
    setTimeout(tick, TICK_MS).unref();
  };
  setTimeout(tick, TICK_MS).unref();
}

// V8's collection kinds (perf_hooks constants NODE_PERFORMANCE_GC_*).
const GC_KINDS: Record<number, string> = { 1: 'minor', 2: 'major', 4: 'incremental', 8: 'weak' };
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    if (entry.duration <= 1) continue;
    const { detail } = entry as unknown as { detail?: { kind?: number } };
    const kind = detail?.kind ?? 0;
    const name = GC_KINDS[kind] ?? String(kind);
    out.push(`${clock(origin + entry.startTime)} ${who} gc ${entry.duration.toFixed(1)} ms ${name}`);
  }
}).observe({ entryTypes: ['gc'] });

setInterval(() => {
  if (out.length > 0) fs.appendFileSync(logFile, out.splice(0).join('\n') + '\n');
}, 500).unref();
