import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobRunner } from '../../server/src/jobs/job.runner.js';
import { login, type ListBody, caller, expectStatus } from './support/identity.js';
import { createTestApp, type TestApp } from './support/test-app.js';

type JobBody = {
  id: string;
  status: string;
  queuePosition: number | null;
  errors: unknown[];
  failed: number;
};

let t: TestApp;
let call: ReturnType<typeof caller>;

beforeAll(async () => {
  t = await createTestApp();
  call = caller(t, { authorization: `Bearer ${await login(t)}` });
}, 120_000);
afterAll(() => t?.close());

type Row = { id: string; n: number; status: string; errors: unknown[] };
const sql = (query: string, params: unknown[] = []) => t.orm.em.getConnection().execute<Row[]>(query, params);

const insertJob = async (type: string, status: string, extra = '') => {
  const id = randomUUID();
  await sql(
    `INSERT INTO jobs (id, account_id, type, status, input, errors, result, created_at, updated_at ${extra ? ', node_id, started_at' : ''})
     VALUES (?, ?, ?, ?, '{}', '[]', '{}', now(), now() ${extra ? ', ?, now()' : ''})`,
    extra ? [id, t.rootAccountId, type, status, extra] : [id, t.rootAccountId, type, status],
  );
  return id;
};

describe('background jobs', () => {
  it('shows queued jobs with their queue position, never as in progress, then runs them to the end', async () => {
    const first = await insertJob('template-sync', 'queued');
    const second = await insertJob('no-such-type', 'queued');
    const list = expectStatus<ListBody<JobBody>>(
      await call('GET', '/xapi/v1/jobs?status=queued&sort=createdAt'),
      200,
    );
    expect(list.data.map((j) => [j.id, j.status, j.queuePosition])).toEqual([
      [first, 'queued', 1],
      [second, 'queued', 2],
    ]);
    await t.services.jobs.runner.runOnce();
    const done = expectStatus<JobBody>(await call('GET', `/xapi/v1/jobs/${first}`), 200);
    expect(done).toMatchObject({ status: 'finished', queuePosition: null });
    const failed = expectStatus<JobBody>(await call('GET', `/xapi/v1/jobs/${second}`), 200);
    expect(failed.status).toBe('failed');
    expect(failed.errors).toEqual([expect.objectContaining({ code: 'JOB_FAILED' })]);
  });

  it('recovers jobs of a dead node at start: idempotent kinds are requeued, others failed', async () => {
    const deadNode = randomUUID();
    const retry = await insertJob('template-sync', 'running', deadNode);
    const fail = await insertJob('virtual-device-import', 'running', deadNode);
    const runner = new JobRunner({
      orm: t.orm,
      log: t.app.log,
      nodeId: randomUUID(),
      maxConcurrent: 2,
      nodeFaultyAfterMs: 10_000,
    });
    runner.register({ type: 'template-sync', retryable: true, run: async () => ({}) });
    runner.register({ type: 'virtual-device-import', retryable: false, run: async () => ({}) });
    expect((await runner.recover()).sort()).toEqual([retry, fail].sort());
    const rows = await sql('SELECT id, status, errors FROM jobs WHERE id IN (?)', [[retry, fail]]);
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.get(retry)!.status).toBe('queued');
    expect(byId.get(fail)!.status).toBe('failed');
    expect(byId.get(fail)!.errors).toEqual([expect.objectContaining({ code: 'JOB_NODE_LOST' })]);
  });

  it('keeps jobs of a live node running and runs at most maxConcurrent at once when started', async () => {
    const liveNode = randomUUID();
    await sql(
      `INSERT INTO server_nodes (id, name, hostname, pid, version, started_at, last_heartbeat, details)
       VALUES (?, 'live', 'h', 1, 'x', now(), now(), '{}')`,
      [liveNode],
    );
    const running = await insertJob('template-sync', 'running', liveNode);
    let concurrent = 0;
    let peak = 0;
    const runner = new JobRunner({
      orm: t.orm,
      log: t.app.log,
      nodeId: randomUUID(),
      maxConcurrent: 2,
      nodeFaultyAfterMs: 10_000,
    });
    runner.register({
      type: 'slow',
      retryable: true,
      run: async () => {
        peak = Math.max(peak, ++concurrent);
        await new Promise((resolve) => setTimeout(resolve, 50));
        concurrent--;
      },
    });
    expect(await runner.recover()).toEqual([]);
    const ids = await Promise.all([1, 2, 3, 4, 5].map(() => insertJob('slow', 'queued')));
    await runner.start();
    await expect
      .poll(
        async () =>
          (await sql(`SELECT count(*)::int AS n FROM jobs WHERE type = 'slow' AND status = 'finished'`))[0]!
            .n,
        {
          timeout: 5000,
        },
      )
      .toBe(ids.length);
    await runner.stop();
    expect(peak).toBe(2);
    const [row] = await sql('SELECT status FROM jobs WHERE id = ?', [running]);
    expect(row!.status).toBe('running');
  });

  it('housekeeping deletes ended jobs older than three months', async () => {
    const old = await insertJob('template-sync', 'finished');
    await sql(`UPDATE jobs SET created_at = now() - interval '4 months' WHERE id = ?`, [old]);
    const recent = await insertJob('template-sync', 'finished');
    expect(await t.services.jobs.runner.housekeeping()).toBeGreaterThanOrEqual(1);
    expect((await call('GET', `/xapi/v1/jobs/${old}`)).statusCode).toBe(404);
    expectStatus(await call('GET', `/xapi/v1/jobs/${recent}`), 200);
  });
});
