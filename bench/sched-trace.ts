import fs from 'node:fs';

/**
 * Who had the CPUs while one thread waited for one: reads a tracefs text trace of `sched_switch` and
 * `sched_wakeup` events (docs/performance.md, "Figures with fewer V8 helper threads") and prints, for
 * each wait of that thread over the threshold — from its wakeup, or from being preempted, until it ran
 * again — the threads that ran meanwhile, longest first.
 *
 *   node --import tsx bench/sched-trace.ts <trace file> <thread id> [threshold ms, default 3]
 */

interface Ran {
  from: number;
  to: number;
  thread: string;
}

const SWITCH =
  /prev_comm=(.*?) prev_pid=(\d+) prev_prio=\d+ prev_state=(\S+) ==> next_comm=(.*?) next_pid=(\d+) next_prio=\d+/;
const EVENT = /^\s*.+?-\d+\s+\[(\d+)\]\s+\S+\s+([\d.]+): (sched_switch|sched_wakeup): (.*)$/;

function main(): void {
  const [file, tid, threshold = '3'] = process.argv.slice(2);
  if (!file || !tid) throw new Error('usage: sched-trace.ts <trace file> <thread id> [threshold ms]');
  const thresholdS = Number(threshold) / 1000;
  const onCpu = new Map<string, { thread: string; since: number }>();
  const ran: Ran[] = [];
  const waits: Array<{ from: number; to: number; kind: string }> = [];
  let wokenAt: number | undefined;
  let preemptedAt: number | undefined;
  let first: number | undefined;

  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const event = EVENT.exec(line);
    if (!event) continue;
    const [, cpu, at, kind, fields] = event as unknown as [string, string, string, string, string];
    const t = Number(at);
    first ??= t;
    if (kind === 'sched_wakeup') {
      if (/ pid=(\d+)/.exec(fields)?.[1] === tid) wokenAt ??= t;
      continue;
    }
    const s = SWITCH.exec(fields);
    if (!s) continue;
    const [, , prevPid, prevState, nextComm, nextPid] = s as unknown as string[];
    const previous = onCpu.get(cpu);
    if (previous) ran.push({ from: previous.since, to: t, thread: previous.thread });
    onCpu.set(cpu, { thread: `${nextComm}-${nextPid}`, since: t });
    if (nextPid === tid) {
      const from = wokenAt ?? preemptedAt;
      if (from !== undefined)
        waits.push({ from, to: t, kind: wokenAt !== undefined ? 'woken' : 'preempted' });
      wokenAt = preemptedAt = undefined;
    }
    if (prevPid === tid && prevState!.startsWith('R')) preemptedAt = t;
  }

  const sorted = waits.map((w) => w.to - w.from).sort((a, b) => a - b);
  const at = (p: number) =>
    ((sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0) * 1000).toFixed(2);
  console.log(`${sorted.length} waits for a CPU: p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${at(1)} ms`);
  for (const wait of waits) {
    if (wait.to - wait.from < thresholdS) continue;
    const meanwhile = new Map<string, number>();
    for (const r of ran) {
      const overlap = Math.min(r.to, wait.to) - Math.max(r.from, wait.from);
      if (overlap > 0) meanwhile.set(r.thread, (meanwhile.get(r.thread) ?? 0) + overlap);
    }
    const top = [...meanwhile]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 6)
      .map(([thread, s]) => `${thread} ${(s * 1000).toFixed(1)}`);
    console.log(
      `  +${(wait.from - first!).toFixed(3)} s ${wait.kind}, waited ${((wait.to - wait.from) * 1000).toFixed(1)} ms; ran meanwhile (ms): ${top.join(', ')}`,
    );
  }
}

main();
