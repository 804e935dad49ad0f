import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { RestartSupervisor, type RestartSupervisorOptions } from './restart-supervisor.js';

const log = pino({ level: 'silent' });
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A supervisor over `restart`, recording what it reports. */
function supervise(restart: () => Promise<void>, options: Partial<RestartSupervisorOptions> = {}) {
  const seen = { recovered: [] as number[], gaveUp: [] as Error[] };
  const supervisor = new RestartSupervisor({
    name: 'test service',
    restart,
    maxAttempts: 3,
    log,
    delaysMs: [5, 10],
    onRecovered: (downMs) => seen.recovered.push(downMs),
    onGiveUp: (error) => seen.gaveUp.push(error),
    ...options,
  });
  return { supervisor, seen };
}

const until = async (condition: () => boolean) => {
  for (let i = 0; i < 200 && !condition(); i++) await sleep(5);
  expect(condition()).toBe(true);
};

describe('RestartSupervisor', () => {
  it('restarts after an unexpected exit and reports the recovery', async () => {
    let starts = 0;
    const { supervisor, seen } = supervise(async () => void starts++);
    supervisor.exited({ signal: 'SIGKILL' });
    await until(() => seen.recovered.length === 1);
    expect(starts).toBe(1);
    expect(seen.gaveUp).toEqual([]);
  });

  it('retries a failing restart and gives up after maxAttempts with the last error', async () => {
    let starts = 0;
    const { supervisor, seen } = supervise(async () => {
      starts++;
      throw new Error(`attempt ${starts} failed`);
    });
    supervisor.exited({ code: 1 });
    await until(() => seen.gaveUp.length === 1);
    expect(starts).toBe(3);
    expect(seen.gaveUp[0]!.message).toBe('attempt 3 failed');
    expect(seen.recovered).toEqual([]);
  });

  it('gives up at the first exit when no restart is allowed', async () => {
    let starts = 0;
    const { supervisor, seen } = supervise(async () => void starts++, { maxAttempts: 0 });
    supervisor.exited({ signal: 'SIGKILL' });
    await until(() => seen.gaveUp.length === 1);
    expect(starts).toBe(0);
  });

  it('counts crashes soon after a restart, and forgets them once it ran long enough', async () => {
    const { supervisor, seen } = supervise(async () => undefined, { maxAttempts: 2, stableAfterMs: 200 });
    supervisor.exited({});
    await until(() => seen.recovered.length === 1);
    supervisor.exited({});
    await until(() => seen.recovered.length === 2);
    // A third crash right away exceeds the two attempts…
    supervisor.exited({});
    await until(() => seen.gaveUp.length === 1);

    const stable = supervise(async () => undefined, { maxAttempts: 1, stableAfterMs: 50 });
    stable.supervisor.exited({});
    await until(() => stable.seen.recovered.length === 1);
    await sleep(80);
    // …while a crash after a stable run starts counting again.
    stable.supervisor.exited({});
    await until(() => stable.seen.recovered.length === 2);
    expect(stable.seen.gaveUp).toEqual([]);
  });

  it('stops waiting for a restart when stopped', async () => {
    let starts = 0;
    const { supervisor, seen } = supervise(async () => void starts++, { delaysMs: [10_000] });
    supervisor.exited({});
    const began = Date.now();
    await supervisor.stop();
    expect(Date.now() - began).toBeLessThan(1000);
    expect(starts).toBe(0);
    supervisor.exited({});
    await sleep(20);
    expect(seen).toEqual({ recovered: [], gaveUp: [] });
  });
});
