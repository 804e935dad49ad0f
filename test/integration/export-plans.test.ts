import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, caller, expectStatus, login } from './support/identity.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { startSmtpServer, type TestSmtpServer } from './support/smtp.js';
import {
  downloadRows,
  runPlan,
  seedExportWorld,
  wallClock,
  type ExportWorld,
} from './support/export-world.js';
import { expectedOptionRows, EXCEL_PLAN, CLUSTER_PLAN, DAILY_PLAN } from './support/export-expectations.js';

// Export plans on the PostgreSQL target: every option read back cell by cell, the queue, ranges,
// the schedule on the injectable clock and e-mail through a real SMTP server.

let t: TestApp;
let pool: pg.Pool;
let world: ExportWorld;
let smtp: TestSmtpServer;
let call: ReturnType<typeof caller>;
let token: string;
let now = new Date('2026-11-05T12:00:00Z');
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'stellwerk-exports-'));

beforeAll(async () => {
  t = await createTestApp({
    clock: () => now,
    env: { STELLWERK_DATA_DIR: dataDir, STELLWERK_EXPORT_MAIL_ATTACHMENT_MAX_BYTES: '2000' },
  });
  pool = new pg.Pool({ connectionString: String(t.orm.config.get('clientUrl')), max: 2 });
  world = await seedExportWorld(pool, t.rootAccountId);
  token = await login(t);
  call = caller(t, bearer(token));
  smtp = await startSmtpServer();
});

afterAll(async () => {
  await smtp?.close();
  await pool?.end();
  await t?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const createPlan = async (body: Record<string, unknown>) =>
  expectStatus<{ id: string; nextRunAt: string | null }>(
    await call('POST', '/xapi/v1/export-plans', body),
    201,
  );

describe('export plans on PostgreSQL', () => {
  it('writes every option as a German Excel file and the cells read back as expected', async () => {
    const plan = await createPlan(EXCEL_PLAN);
    const job = await runPlan(t, call, plan.id);
    expect(job.status, JSON.stringify(job.errors)).toBe('finished');
    const expected = expectedOptionRows(world, 'excel');
    expect(job.progress).toBe(expected.length - 1);
    expect(job.total).toBe(expected.length - 1);
    const file = await call('GET', `/xapi/v1/jobs/${job.id}/file`);
    expect([...file.rawPayload.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(file.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(await downloadRows(call, job.id, { delimiter: ';' })).toEqual(expected);
  });

  it('writes one row per twin and packet time with a column per state, gzip-compressed, over a month end', async () => {
    const plan = await createPlan(CLUSTER_PLAN);
    const job = await runPlan(t, call, plan.id);
    expect(job.status, JSON.stringify(job.errors)).toBe('finished');
    expect(job.result).toMatchObject({ from: '2026-10-01T04:00:00.000Z', to: '2026-11-01T04:00:00.000Z' });
    // Named by the whole period, first and last day in the plan's zone (the end is exclusive).
    const file = await call('GET', `/xapi/v1/jobs/${job.id}/file`);
    expect(file.headers['content-disposition']).toContain(
      'filename="Cluster_New_York_2026-10-01_2026-10-31.csv.gz"',
    );
    expect(await downloadRows(call, job.id, { gzip: true })).toEqual(expectedOptionRows(world, 'cluster'));
  });

  it('averages per day on the wall clock of the zone (a 25-hour day) and per real hour', async () => {
    const daily = await runPlan(t, call, (await createPlan(DAILY_PLAN)).id);
    expect(await downloadRows(call, daily.id)).toEqual(expectedOptionRows(world, 'daily'));
    const hourly = await runPlan(
      t,
      call,
      (await createPlan({ ...DAILY_PLAN, shape: { ...DAILY_PLAN.shape, average: 'hour' } })).id,
    );
    const rows = await downloadRows(call, hourly.id);
    const oct25 = rows.slice(1).filter((r) => r[0]!.startsWith('2026-10-25'));
    expect(oct25.map((r) => r[0])).toContain('2026-10-25T02:00:00+02:00');
    expect(oct25.map((r) => r[0])).toContain('2026-10-25T02:00:00+01:00');
    expect(oct25).toHaveLength(25);
  });

  it('writes times that spreadsheets read as dates when asked, the same wall clock without its offset', async () => {
    const spreadsheet = {
      ...DAILY_PLAN,
      format: { ...DAILY_PLAN.format, timeFormat: 'spreadsheet' },
    };
    const plan = await createPlan(spreadsheet);
    const stored = expectStatus<{ format: { timeFormat?: string } }>(
      await call('GET', `/xapi/v1/export-plans/${plan.id}`),
      200,
    );
    expect(stored.format.timeFormat).toBe('spreadsheet');
    const job = await runPlan(t, call, plan.id);
    const [header, ...rows] = await downloadRows(call, job.id);
    const [isoHeader, ...isoRows] = expectedOptionRows(world, 'daily');
    expect(header).toEqual(isoHeader);
    expect(rows.length).toBeGreaterThan(0);
    expect(rows).toEqual(
      isoRows.map(([time, ...rest]) => [time!.replace('T', ' ').replace(/[+-]\d\d:\d\d$/, ''), ...rest]),
    );
    expect(rows[0]![0]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    const refused = await call('POST', '/xapi/v1/export-plans', {
      ...spreadsheet,
      format: { ...spreadsheet.format, timeFormat: 'excel' },
    });
    expect(refused.statusCode).toBe(400);
  });

  it('previews the first 20 rows of a definition as the file writes them', async () => {
    const { title: _title, ...definition } = EXCEL_PLAN;
    const preview = expectStatus<{ columns: string[]; rows: string[][] }>(
      await call('POST', '/xapi/v1/export-plans/preview', definition),
      200,
    );
    const expected = expectedOptionRows(world, 'excel');
    expect(preview.columns).toEqual(expected[0]);
    expect(preview.rows).toEqual(expected.slice(1, 21));
  });

  it('shows queued runs with their queue position and resumes a download with an HTTP range', async () => {
    const plan = await createPlan(DAILY_PLAN);
    const queued = [];
    for (let i = 0; i < 3; i++)
      queued.push(
        expectStatus<{ id: string }>(await call('POST', `/xapi/v1/export-plans/${plan.id}/run`), 202).id,
      );
    for (const [i, id] of queued.entries()) {
      const job = expectStatus<{ status: string; queuePosition: number }>(
        await call('GET', `/xapi/v1/jobs/${id}`),
        200,
      );
      expect(job).toMatchObject({ status: 'queued', queuePosition: i + 1 });
    }
    const listed = expectStatus<{
      data: Array<{ id: string; lastJob: { id: string; status: string; queuePosition: number } }>;
    }>(await call('GET', '/xapi/v1/export-plans?searchItems=daily'), 200);
    expect(listed.data.find((p) => p.id === plan.id)?.lastJob).toMatchObject({
      id: queued[2],
      status: 'queued',
      queuePosition: 3,
    });
    await t.services.jobs.runner.runOnce();
    const whole = await call('GET', `/xapi/v1/jobs/${queued[0]}/file`);
    const part = await t.app.inject({
      method: 'GET',
      url: `/xapi/v1/jobs/${queued[0]}/file`,
      headers: { ...bearer(token), range: 'bytes=20-' },
    });
    expect(part.statusCode).toBe(206);
    expect(part.headers['content-range']).toBe(
      `bytes 20-${whole.rawPayload.length - 1}/${whole.rawPayload.length}`,
    );
    expect(part.rawPayload.equals(whole.rawPayload.subarray(20))).toBe(true);
  });

  it('runs a scheduled plan at its cron time in the plan zone and e-mails the file, or a link when it is large', async () => {
    const url = new URL(smtp.url);
    const connector = expectStatus<{ id: string }>(
      await call('POST', '/xapi/v1/connectors', {
        type: 'smtp-mail',
        title: 'Export mail',
        config: {
          host: url.hostname,
          port: Number(url.port),
          security: 'none',
          from: 'Stellwerk <exports@plant.test>',
          auth: 'password',
          username: decodeURIComponent(url.username),
          password: decodeURIComponent(url.password),
        },
      }),
      201,
    );
    now = new Date('2026-10-26T04:00:00Z');
    const small = await createPlan({
      ...DAILY_PLAN,
      title: 'Status mail',
      range: { relative: 'previousDay' },
      selection: { operator: 'and', conditions: [{ field: 'title', value: 'Pumpe B1' }], states: ['status'] },
      shape: { ...DAILY_PLAN.shape, average: null },
      schedule: '0 6 * * *',
      mailConnectorId: connector.id,
      mailTo: ['billing@plant.test'],
    });
    // 06:00 in Berlin on the first day of winter time.
    expect(small.nextRunAt).toBe('2026-10-26T05:00:00.000Z');
    const large = await createPlan({
      ...DAILY_PLAN,
      title: 'Flow mail',
      range: { relative: 'previousDay' },
      shape: { ...DAILY_PLAN.shape, average: null },
      schedule: '0 6 * * *',
      mailConnectorId: connector.id,
      mailTo: ['engineering@plant.test'],
    });
    now = new Date('2026-10-26T04:59:00Z');
    expect(await t.services.exportRuns.runDue(now)).toEqual([]);
    now = new Date('2026-10-26T05:00:10Z');
    expect((await t.services.exportRuns.runDue(now)).sort()).toEqual([small.id, large.id].sort());
    await t.services.jobs.runner.runOnce();

    const attached = await smtp.waitFor('billing@plant.test', 10_000);
    // Named by the plan and the period's first day in the plan's zone (Berlin's 25 October).
    expect(attached.raw).toMatch(/filename="?Status_mail_2026-10-25\.csv/);
    const rows = parse(attachmentOf(attached.raw), { bom: true });
    expect(rows.slice(1)).toEqual(
      world.berlinStatus.map((s) => [
        wallClock(s.time, 'Europe/Berlin'),
        'Pumpe B1',
        'Werk Berlin / Pumpe B1',
        'status',
        '',
        `'${s.text}`,
      ]),
    );
    const linked = await smtp.waitFor('engineering@plant.test', 10_000);
    const link = /https?:\/\/\S+\/xapi\/v1\/export-files\/(\S+)/.exec(linked.decoded);
    expect(link, linked.decoded).not.toBeNull();
    const file = await t.app.inject({ method: 'GET', url: `/xapi/v1/export-files/${link![1]}` });
    expect(file.statusCode).toBe(200);
    expect(file.headers['content-disposition']).toBe(
      `attachment; filename="Flow_mail_2026-10-25.csv"; filename*=UTF-8''Flow_mail_2026-10-25.csv`,
    );
    const linkedRows = parse(file.rawPayload, { bom: true });
    // Berlin's 25-hour day: 50 half-hour points of flow.
    expect(linkedRows.slice(1).map((r) => r[0])).toEqual(
      world.berlinFlow.slice(4, 54).map((p) => wallClock(p.time, 'Europe/Berlin')),
    );
    now = new Date('2026-10-30T05:00:10Z');
    const expired = await t.app.inject({ method: 'GET', url: `/xapi/v1/export-files/${link![1]}` });
    expect(expired.statusCode).toBe(404);
  });
});

/** The first attachment of a raw MIME message, decoded. */
function attachmentOf(raw: string): Buffer {
  const part = raw.split(/\r?\n--/).find((p) => /Content-Disposition: attachment/i.test(p));
  expect(part, raw.slice(0, 2000)).toBeDefined();
  const [head, ...body] = part!.split(/\r?\n\r?\n/);
  const content = body.join('\n\n');
  if (/Content-Transfer-Encoding: base64/i.test(head!))
    return Buffer.from(content.replace(/\s+/g, ''), 'base64');
  if (/quoted-printable/i.test(head!))
    return Buffer.from(
      content
        .replace(/=\r?\n/g, '')
        .replace(/=([0-9A-F]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16))),
      'latin1',
    );
  return Buffer.from(content);
}
