import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeConnector, makeDriver } from './support/device-fixtures.js';
import { login, type ListBody, caller, expectStatus } from './support/identity.js';
import { createTestApp, type TestApp } from './support/test-app.js';

type JobBody = {
  id: string;
  type: string;
  status: string;
  total: number;
  progress: number;
  succeeded: number;
  failed: number;
  errors: Array<{ row: number; code: string; message: string }>;
  result: Record<string, unknown>;
};

let t: TestApp;
let call: ReturnType<typeof caller>;
let token: string;

beforeAll(async () => {
  t = await createTestApp();
  token = await login(t);
  call = caller(t, { authorization: `Bearer ${token}` });
}, 120_000);
afterAll(() => t?.close());

describe('CSV import of virtual devices', () => {
  /** Posts `csv` as a JSON import, runs the job queue once and returns the finished job. */
  const importJob = async (csv: string): Promise<JobBody> => {
    const job = expectStatus<JobBody>(await call('POST', '/xapi/v1/virtual-devices/import', { csv }), 202);
    await t.services.jobs.runner.runOnce();
    return expectStatus<JobBody>(await call('GET', `/xapi/v1/jobs/${job.id}`), 200);
  };

  it('imports 10,000 devices as a job that finishes with per-row errors for the bad rows', async () => {
    const connectorId = await makeConnector(t, t.rootAccountId, 'tts-uplink');
    const driverId = await makeDriver(t, t.rootAccountId);
    const child = expectStatus<{ id: string }>(
      await call('POST', '/xapi/v1/accounts', { title: 'Elsewhere', parentId: t.rootAccountId }),
      201,
    );
    const foreignDriver = await makeDriver(t, child.id);
    await call('POST', '/xapi/v1/virtual-devices', { device_id: 'exists-already', title: 'x', connectorId });

    const lines = ['device_id,title,connectorId,deviceDriverId,tags,operationalStatus,devEui,kv.room'];
    const bad = new Map<number, string>();
    for (let i = 1; i <= 10_000; i++) {
      const line = i + 1; // the header is line 1
      if (i % 1000 === 1) {
        bad.set(line, 'CONFIG_NOT_ASSIGNED');
        lines.push(`dev-${i},Device ${i},${connectorId},${foreignDriver},a;b,1,,${i}`);
      } else if (i % 1000 === 2) {
        bad.set(line, 'VALIDATION_ERROR');
        lines.push(`dev-${i},Device ${i},${connectorId},${driverId},a,1.5,,${i}`);
      } else if (i === 3) {
        bad.set(line, 'DEVICE_ID_TAKEN');
        lines.push(`exists-already,Device ${i},${connectorId},${driverId},a,1,,${i}`);
      } else {
        const eui = i.toString(16).padStart(16, 'A');
        lines.push(`dev-${i},Device ${i},${connectorId},${driverId},a;b,${i % 5},${eui},${i}`);
      }
    }
    const began = Date.now();
    const response = await t.app.inject({
      method: 'POST',
      url: '/xapi/v1/virtual-devices/import',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'text/csv' },
      payload: lines.join('\n'),
    });
    const queued = expectStatus<JobBody & { queuePosition: number }>(response, 202);
    expect(queued).toMatchObject({
      type: 'virtual-device-import',
      status: 'queued',
      queuePosition: 1,
      total: 10_000,
    });

    await t.services.jobs.runner.runOnce();
    const job = expectStatus<JobBody>(await call('GET', `/xapi/v1/jobs/${queued.id}`), 200);
    expect(Date.now() - began).toBeLessThan(30_000);
    expect(job).toMatchObject({
      status: 'finished',
      total: 10_000,
      progress: 10_000,
      failed: bad.size,
      succeeded: 10_000 - bad.size,
      result: { created: 10_000 - bad.size },
    });
    expect(new Map(job.errors.map((e) => [e.row, e.code]))).toEqual(bad);
    expect(job.errors.find((e) => e.code === 'CONFIG_NOT_ASSIGNED')!.message).toContain(
      'ConfigNotAssignedError',
    );

    const sample = expectStatus<ListBody<Record<string, unknown>>>(
      await call('GET', '/xapi/v1/virtual-devices?filter[kv.room]=17'),
      200,
    );
    expect(sample.data).toEqual([
      expect.objectContaining({
        device_id: 'dev-17',
        tags: ['a', 'b'],
        operationalStatus: 2,
        devEui: 'aaaaaaaaaaaaaa11',
        endDeviceId: 'eui-aaaaaaaaaaaaaa11',
        healthState: 'Unknown',
      }),
    ]);
  }, 60_000);

  it('reports over-long cells as row errors naming the column and its limit, never the SQL', async () => {
    const lines = [
      'device_id,title,endDeviceId,tags,operationalStatus,kv.note',
      `long-1,${'t'.repeat(201)},,,,`,
      `long-2,Long end device id,${'e'.repeat(101)},,,`,
      `long-3,Long tag,,a;${'g'.repeat(101)},,`,
      `long-4,Long value,,,,${'n'.repeat(2001)}`,
      `long-5,Huge status,,,99999999999,`,
      `${'d'.repeat(201)},Long device id,,,,`,
      'long-7,Fine,,,,',
    ];
    const done = await importJob(lines.join('\n'));
    expect(done).toMatchObject({ status: 'finished', succeeded: 1, failed: 6 });
    expect(done.errors.map((e) => [e.row, e.code, e.message])).toEqual([
      [2, 'VALIDATION_ERROR', 'title is longer than 200 characters (201)'],
      [3, 'VALIDATION_ERROR', 'endDeviceId is longer than 100 characters (101)'],
      [4, 'VALIDATION_ERROR', 'a label in tags is longer than 100 characters (101)'],
      [5, 'VALIDATION_ERROR', 'kv.note is longer than 2000 characters (2001)'],
      [6, 'VALIDATION_ERROR', 'operationalStatus must be an integer (32 bits), got "99999999999"'],
      [7, 'VALIDATION_ERROR', 'device_id is longer than 200 characters (201)'],
    ]);
    expect(JSON.stringify(done)).not.toMatch(/insert into|values \(|virtual_devices/i);
  });

  it("refuses rows whose device_id the embedded broker's topic cannot carry", async () => {
    const broker = await makeConnector(t, t.rootAccountId, 'mqtt-broker');
    const lines = [
      'device_id,title,connectorId',
      `a/b,Slash,${broker}`,
      `a+b,Plus,${broker}`,
      `a-b,Fine,${broker}`,
    ];
    const done = await importJob(lines.join('\n'));
    expect(done).toMatchObject({ status: 'finished', succeeded: 1, failed: 2 });
    expect(done.errors.map((e) => [e.row, e.code])).toEqual([
      [2, 'VALIDATION_ERROR'],
      [3, 'VALIDATION_ERROR'],
    ]);
    expect(done.errors[0]!.message).toContain('cannot hold "/", "+" or "#"');
  });

  it('accepts a JSON {csv} body, refuses an unreadable file at once, and never leaves a job running', async () => {
    const unknown = await call('POST', '/xapi/v1/virtual-devices/import', { csv: 'device_id,colour\nx,red' });
    expect(unknown.statusCode).toBe(400);
    const empty = await call('POST', '/xapi/v1/virtual-devices/import', { csv: 'device_id,title' });
    expect(empty.statusCode).toBe(400);
    const done = await importJob(
      'device_id,title,deviceTemplateId\njson-1,Json one,\n,Missing id,\njson-2,Bad template,00000000-0000-4000-8000-000000000000',
    );
    expect(done).toMatchObject({ status: 'finished', succeeded: 1, failed: 2 });
    expect(done.errors.map((e) => [e.row, e.code])).toEqual([
      [3, 'VALIDATION_ERROR'],
      [4, 'CONFIG_NOT_ASSIGNED'],
    ]);
    const running = await t.orm.em
      .getConnection()
      .execute<Array<{ n: number }>>(`SELECT count(*)::int AS n FROM jobs WHERE status = 'running'`);
    expect(running[0]!.n).toBe(0);
  });
});
