import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeConnector, makeDriver } from './support/device-fixtures.js';
import { caller, expectStatus, login } from './support/identity.js';
import { createTestApp, type TestApp } from './support/test-app.js';

// A 28 MB CSV import: accepted as a streamed text/csv body, read off the main thread, every row
// imported or reported; bodies over the limits are refused. The file has more rows than the
// 100,000 an import was once limited to; its size comes from long descriptions rather than from
// more rows, since each row costs the job's paced inserts time while the size costs the upload little.

type JobBody = {
  id: string;
  status: string;
  total: number;
  progress: number;
  succeeded: number;
  failed: number;
  errors: Array<{ row: number; code: string; message: string }>;
  result: Record<string, unknown>;
};

const ROWS = 120_000;
let t: TestApp;
let token: string;
let call: ReturnType<typeof caller>;

beforeAll(async () => {
  t = await createTestApp();
  token = await login(t);
  call = caller(t, { authorization: `Bearer ${token}` });
}, 120_000);
afterAll(() => t?.close());

const post = (payload: string, contentType: string) =>
  t.app.inject({
    method: 'POST',
    url: '/xapi/v1/virtual-devices/import',
    headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
    payload,
  });

describe('a 28 MB CSV import', () => {
  it('imports 120,000 devices from a text/csv body with an error for each bad row', async () => {
    const connectorId = await makeConnector(t, t.rootAccountId, 'tts-uplink');
    const driverId = await makeDriver(t, t.rootAccountId);
    const lines = ['device_id,title,description,connectorId,deviceDriverId,tags,operationalStatus,kv.room'];
    const bad = new Map<number, string>();
    const text = `"Sensor, north wing${'.'.repeat(100)}"`;
    for (let i = 1; i <= ROWS; i++) {
      const line = i + 1;
      let status = String(i % 5);
      let id = `big-${i}`;
      if (i % 20_000 === 7) {
        bad.set(line, 'VALIDATION_ERROR');
        status = 'seven';
      } else if (i % 20_000 === 8) {
        bad.set(line, 'DEVICE_ID_TAKEN');
        id = `big-${i - 2}`;
      }
      lines.push(`${id},"Sensor ${i}, hall ${i % 40}",${text},${connectorId},${driverId},a;b,${status},${i}`);
    }
    const csv = lines.join('\r\n');
    expect(Buffer.byteLength(csv)).toBeGreaterThan(28_000_000);

    const response = await post(csv, 'text/csv; charset=utf-8');
    const queued = expectStatus<JobBody>(response, 202);
    expect(queued).toMatchObject({ status: 'queued', total: ROWS });
    await t.services.jobs.runner.runOnce();

    const job = expectStatus<JobBody>(await call('GET', `/xapi/v1/jobs/${queued.id}`), 200);
    expect(job).toMatchObject({
      status: 'finished',
      total: ROWS,
      progress: ROWS,
      failed: bad.size,
      succeeded: ROWS - bad.size,
      result: { created: ROWS - bad.size },
    });
    expect(new Map(job.errors.map((e) => [e.row, e.code]))).toEqual(bad);
    const sql = (query: string) => t.orm.em.getConnection().execute<Array<{ n: number }>>(query);
    expect(
      (await sql(`SELECT count(*)::int AS n FROM virtual_devices WHERE device_id LIKE 'big-%'`))[0]!.n,
    ).toBe(ROWS - bad.size);
    const sample = await t.orm.em
      .getConnection()
      .execute<Array<{ title: string; key_value_data: unknown; operational_status: number }>>(
        `SELECT title, key_value_data, operational_status FROM virtual_devices WHERE device_id = 'big-103457'`,
      );
    expect(sample).toEqual([
      { title: 'Sensor 103457, hall 17', key_value_data: { room: '103457' }, operational_status: 2 },
    ]);
    // The uploaded file is not kept once the job ended.
    expect((await sql('SELECT count(*)::int AS n FROM job_attachments'))[0]!.n).toBe(0);
  }, 600_000);

  it('refuses a text/csv body over 32 MiB and a JSON body over the server body limit with 413', async () => {
    const row = `x,${'y'.repeat(1000)}\n`;
    const huge = `device_id,title\n${row.repeat(Math.ceil((33 * 1024 * 1024) / row.length))}`;
    const tooBig = await post(huge, 'text/csv');
    expect(tooBig.statusCode).toBe(413);
    expect(tooBig.json<{ error: { code: string } }>().error.code).toBe('PAYLOAD_TOO_LARGE');

    const json = JSON.stringify({ csv: `device_id,title\n${row.repeat(1100)}` });
    expect(json.length).toBeGreaterThan(t.config.bodyLimitBytes);
    const jsonTooBig = await post(json, 'application/json');
    expect(jsonTooBig.statusCode).toBe(413);

    // The same file as text/csv is accepted.
    const asCsv = await post(`device_id,title\n${row.repeat(1100)}`, 'text/csv');
    expect(asCsv.statusCode).toBe(202);
    await t.services.jobs.runner.runOnce();
  }, 120_000);

  it('refuses an unreadable row far down the file at once, queueing nothing', async () => {
    const rows = Array.from({ length: 5000 }, (_v, i) => `late-${i},Late ${i}`);
    rows.push('late-x,"unclosed');
    const response = await post(`device_id,title\n${rows.join('\n')}`, 'text/csv');
    expect(response.statusCode).toBe(400);
    expect(response.json<{ error: { message: string } }>().error.message).toMatch(/cannot be read.*5002/);
    const queued = await t.orm.em
      .getConnection()
      .execute<Array<{ n: number }>>(`SELECT count(*)::int AS n FROM jobs WHERE status = 'queued'`);
    expect(queued[0]!.n).toBe(0);
  });
});
