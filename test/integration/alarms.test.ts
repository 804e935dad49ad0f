import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClock } from './support/auth.js';
import { bearer, caller, errorCode, expectStatus, login, userWithPermissions } from './support/identity.js';
import { insertConnector, insertDevice, sql } from './support/ingest-fixtures.js';
import { RecordingDispatch } from './support/recording-dispatch.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/** Alarm log (scoping, filters, acknowledge/close), smart groups and alarm reports. */

const clock = new TestClock();
let t: TestApp;
let admin: ReturnType<typeof caller>;
let tenantA: string;
let tenantB: string;
let callA: ReturnType<typeof caller>;
const recorder = new RecordingDispatch();

interface Alarm {
  id: string;
  status: string;
  category: string;
  message: string;
  acknowledgedAt: string | null;
  closedAt: string | null;
  acknowledgedBy: string | null;
}
interface List<T> {
  data: T[];
  meta: { total: number };
}

const write = (
  accountId: string,
  category: string,
  message: string,
  reference?: { type: string; id: string },
) => t.services.alarmLogs.write({ accountId, category, message, ...(reference ? { reference } : {}) });

beforeAll(async () => {
  t = await createTestApp({ clock: clock.now });
  t.services.outgoing.use(recorder);
  admin = caller(t, bearer(await login(t)));
  tenantA = expectStatus<{ id: string }>(
    await admin('POST', '/xapi/v1/accounts', { title: 'Tenant A' }),
    201,
  ).id;
  tenantB = expectStatus<{ id: string }>(
    await admin('POST', '/xapi/v1/accounts', { title: 'Tenant B' }),
    201,
  ).id;
  const user = await userWithPermissions(
    t,
    bearer(await login(t)),
    'alarm operator',
    ['alarmLog.manage', 'smartGroup.manage', 'alarmReport.manage'],
    { accountId: tenantA },
  );
  callA = caller(t, bearer(user.token));
}, 60_000);

afterAll(() => t?.close());

describe('alarm log', () => {
  it('lists the entries of the caller’s account only, with filters, sort and paging', async () => {
    await write(tenantA, 'Temperatur', 'a1');
    await write(tenantA, 'Konnektorüberwachung', 'a2', {
      type: 'connector',
      id: '01900000-0000-7000-8000-000000000001',
    });
    await write(tenantB, 'Temperatur', 'b1');
    const all = expectStatus<List<Alarm>>(await callA('GET', '/xapi/v1/alarm-logs'), 200);
    expect(all.data.map((a) => a.message).sort()).toEqual(['a1', 'a2']);
    expect(
      expectStatus<List<Alarm>>(await callA('GET', '/xapi/v1/alarm-logs?category=Temperatur'), 200).data.map(
        (a) => a.message,
      ),
    ).toEqual(['a1']);
    expect(
      expectStatus<List<Alarm>>(
        await callA(
          'GET',
          '/xapi/v1/alarm-logs?referenceType=connector&referenceId=01900000-0000-7000-8000-000000000001',
        ),
        200,
      ).data.map((a) => a.message),
    ).toEqual(['a2']);
    const paged = expectStatus<List<Alarm>>(
      await callA('GET', '/xapi/v1/alarm-logs?pageSize=1&page=2&sort=category'),
      200,
    );
    expect(paged.meta.total).toBe(2);
    expect(paged.data.map((a) => a.message)).toEqual(['a1']);
    expect((await callA('GET', `/xapi/v1/alarm-logs?accountId=${tenantB}`)).statusCode).toBe(404);
    const foreign = (await t.services.alarmLogs.write({ accountId: tenantB, category: 'x', message: 'b2' }))
      .id;
    expect((await callA('GET', `/xapi/v1/alarm-logs/${foreign}`)).statusCode).toBe(404);
    expect((await callA('POST', `/xapi/v1/alarm-logs/${foreign}/acknowledge`)).statusCode).toBe(404);
    expect((await callA('GET', '/xapi/v1/alarm-logs?status=open,bogus')).statusCode).toBe(400);
  });

  it('moves open → acknowledged → closed with who and when; a closed entry is not acknowledged', async () => {
    const entry = await write(tenantA, 'Test', 'to handle');
    const acked = expectStatus<Alarm>(
      await callA('POST', `/xapi/v1/alarm-logs/${entry.id}/acknowledge`),
      200,
    );
    expect(acked).toMatchObject({ status: 'acknowledged', closedAt: null });
    expect(acked.acknowledgedAt).not.toBeNull();
    expect(acked.acknowledgedBy).not.toBeNull();
    expect(
      expectStatus<List<Alarm>>(await callA('GET', '/xapi/v1/alarm-logs?status=acknowledged'), 200).data.map(
        (a) => a.id,
      ),
    ).toEqual([entry.id]);
    expect(
      expectStatus<Alarm>(await callA('POST', `/xapi/v1/alarm-logs/${entry.id}/close`), 200).status,
    ).toBe('closed');
    const again = await callA('POST', `/xapi/v1/alarm-logs/${entry.id}/acknowledge`);
    expect(again.statusCode).toBe(409);
    expect(errorCode(again)).toBe('ALARM_CLOSED');
    expect(
      expectStatus<Alarm>(await callA('POST', `/xapi/v1/alarm-logs/${entry.id}/close`), 200).status,
    ).toBe('closed');
    const reader = await userWithPermissions(t, bearer(await login(t)), 'alarm reader', ['alarmLog.read'], {
      accountId: tenantA,
    });
    expect(
      (await caller(t, bearer(reader.token))('POST', `/xapi/v1/alarm-logs/${entry.id}/close`)).statusCode,
    ).toBe(403);
  });
});

describe('smart groups and alarm reports', () => {
  it('report the members in alarm (health or open alarms) on demand and on schedule, mail through the SMTP connector, and block deleting their group', async () => {
    const connector = await insertConnector(t, tenantA, 'webhook-in');
    const pumps = [];
    for (const name of ['pump-1', 'pump-2', 'pump-3'])
      pumps.push(
        await insertDevice(t, { connectorId: connector, deviceKey: name, accountId: tenantA, title: name }),
      );
    await insertDevice(t, {
      connectorId: connector,
      deviceKey: 'valve-1',
      accountId: tenantA,
      title: 'valve-1',
    });
    // pump-1 is Critical (it has been seen), pump-2 has an open alarm, pump-3 is fine.
    await sql(t, `UPDATE virtual_devices SET health_state = 'Critical', last_seen = now() WHERE id = ?`, [
      pumps[0],
    ]);
    await write(tenantA, 'Druck', 'pressure low', { type: 'virtualDevice', id: pumps[1]! });
    const smtp = await insertConnector(t, tenantA, 'smtp-mail');

    const group = expectStatus<{ id: string }>(
      await callA('POST', '/xapi/v1/smart-groups', {
        title: 'Pumps',
        target: 'device',
        filter: { 'filter[title]': 'pump' },
      }),
      201,
    );
    expect(
      (await callA('POST', '/xapi/v1/smart-groups', { title: 'Bad', filter: { 'filter[colour]': 'x' } }))
        .statusCode,
    ).toBe(400);
    const report = expectStatus<{ id: string; nextRunAt: string }>(
      await callA('POST', `/xapi/v1/smart-groups/${group.id}/alarm-reports`, {
        title: 'Daily pumps',
        schedule: { intervalSeconds: 3600 },
        mailConnectorId: smtp,
        mailTo: ['shift@example.test'],
      }),
      201,
    );
    const wrongMail = await callA('POST', `/xapi/v1/smart-groups/${group.id}/alarm-reports`, {
      title: 'x',
      mailConnectorId: connector,
    });
    expect(errorCode(wrongMail)).toBe('INVALID_MAIL_CONNECTOR');

    const run = expectStatus<{
      lastResult: {
        trigger: string;
        members: number;
        inAlarm: Array<{ title: string; healthState: string; openAlarms: number }>;
        mail: string;
      };
    }>(await callA('POST', `/xapi/v1/alarm-reports/${report.id}/execute`), 200);
    expect(run.lastResult).toMatchObject({ trigger: 'manual', members: 3, mail: 'queued' });
    expect(run.lastResult.inAlarm.map((m) => [m.title, m.healthState, m.openAlarms])).toEqual([
      ['pump-1', 'Critical', 0],
      ['pump-2', 'Unknown', 1],
    ]);
    const mail = recorder.from('alarm-report', report.id)[0]!;
    expect(mail).toMatchObject({
      connectorId: smtp,
      message: { to: ['shift@example.test'], subject: 'Alarm report "Daily pumps": 2 of 3 in alarm' },
    });
    expect(String(mail.message.body)).toContain('pump-2');

    expect(await t.services.alarmReports.runDue(clock.now())).toEqual([]);
    clock.advance(3_601_000);
    expect(await t.services.alarmReports.runDue(clock.now())).toEqual([report.id]);
    const scheduled = expectStatus<{ lastResult: { trigger: string } }>(
      await callA('GET', `/xapi/v1/alarm-reports/${report.id}`),
      200,
    );
    expect(scheduled.lastResult.trigger).toBe('schedule');

    const blocked = await callA('DELETE', `/xapi/v1/smart-groups/${group.id}`);
    expect(blocked.statusCode).toBe(409);
    expect(blocked.json()).toMatchObject({
      error: {
        code: 'DELETE_BLOCKED',
        details: [{ type: 'alarmReport', id: report.id, title: 'Daily pumps' }],
      },
    });
    expect((await callA('DELETE', `/xapi/v1/alarm-reports/${report.id}`)).statusCode).toBe(204);
    expect((await callA('DELETE', `/xapi/v1/smart-groups/${group.id}`)).statusCode).toBe(204);
  });
});
