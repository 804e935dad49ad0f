import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMosquitto, startBrokerApp, type BrokerTestApp } from './support/broker.js';
import { startHttpReceiver, type HttpReceiver, type ReceivedRequest } from './support/http-receiver.js';
import { bearer, caller, expectStatus, login } from './support/identity.js';
import { startSmtpServer, type ReceivedMail, type TestSmtpServer } from './support/smtp.js';
import { waitFor } from './support/wait.js';

/**
 * An event rule end to end with real parts only: `mosquitto_pub` → the server's broker →
 * packet → device (with a referenceId) → dynamic data routing → a twin state → an event rule →
 * (a) a signed webhook to an HTTP receiver started here, verified with the `standardwebhooks`
 * package, (b) an e-mail through an smtp-mail connector to an `smtp-server` started here, and
 * (c) an alarm log entry referencing the twin. No recording dispatcher: the rule's commands go
 * through the server's own outgoing dispatcher. Receivers listen on loopback, which createTestApp
 * allows (STELLWERK_OUTGOING_ALLOW_PRIVATE=127.0.0.0/8,::1).
 */

const PUBLIC_URL = 'https://stellwerk.example';
const MAIL_TO = 'cold-chain@plant.test';
/** How long "nothing fired" is watched after a value that must not fire. */
const QUIET_MS = 1500;
const secret = `whsec_${randomBytes(32).toString('base64')}`;

let t: BrokerTestApp;
let receiver: HttpReceiver;
let smtp: TestSmtpServer;
let call: ReturnType<typeof caller>;
const ids: Record<string, string> = {};
const credentials = { username: '', password: '' };

interface Alarm {
  category: string;
  message: string;
  status: string;
  occurrenceCount: number;
  reference: { type: string; id: string } | null;
  source: { kind: string; id: string } | null;
}

beforeAll(async () => {
  [receiver, smtp] = await Promise.all([startHttpReceiver(), startSmtpServer()]);
  t = await startBrokerApp({ env: { STELLWERK_PUBLIC_URL: PUBLIC_URL } });
  call = caller(t, bearer(await login(t)));
}, 60_000);

afterAll(async () => {
  await t?.closeAll();
  await Promise.all([receiver?.close(), smtp?.close()]);
});

const created = async <T = { id: string }>(url: string, body: unknown) =>
  expectStatus<T>(await call('POST', url, body), 201);

/** One `mosquitto_pub` of a JSON reading with the gateway connector's credentials. */
async function publish(reading: Record<string, unknown>) {
  const run = await runMosquitto('mosquitto_pub', [
    ...['-h', '127.0.0.1', '-p', String(t.mqttPort), '-u', credentials.username, '-P', credentials.password],
    ...['-V', 'mqttv311', '-q', '1', '-t', `connectors/${ids.gateway}/devices/cold-store-3-probe/up`],
    ...['-m', JSON.stringify(reading)],
  ]);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
}

/** Waits until the twin state reads `value`, then until the rule engine has evaluated the change. */
async function stateBecomes(value: number) {
  await waitFor(
    async () => {
      const state = expectStatus<{ value: unknown }>(await call('GET', `/xapi/v1/states/${ids.state}`), 200);
      return state.value === value ? true : undefined;
    },
    15_000,
    { what: `the twin state to read ${value}` },
  );
  // The engine queues its batch right after the commit that made the value visible.
  await new Promise((resolve) => setTimeout(resolve, 50));
  await t.services.ruleEngine.idle();
}

async function alarmsOfTwin(): Promise<Alarm[]> {
  const list = expectStatus<{ data: Alarm[] }>(
    await call('GET', `/xapi/v1/alarm-logs?referenceType=digitalTwin&referenceId=${ids.twin}`),
    200,
  );
  return list.data;
}

/** What the three targets have seen so far. */
async function seen() {
  return {
    webhooks: receiver.received.length,
    mails: smtp.received.length,
    alarms: (await alarmsOfTwin()).length,
  };
}

/** Watches for QUIET_MS that none of the three targets sees anything new. */
async function nothingFiresFrom(before: Awaited<ReturnType<typeof seen>>) {
  const deadline = Date.now() + QUIET_MS;
  while (Date.now() < deadline) {
    expect(await seen()).toEqual(before);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function verifiedBody(request: ReceivedRequest): unknown {
  const headers = {
    'webhook-id': String(request.headers['webhook-id']),
    'webhook-timestamp': String(request.headers['webhook-timestamp']),
    'webhook-signature': String(request.headers['webhook-signature']),
  };
  return new Webhook(secret).verify(request.body, headers);
}

/**
 * The mail's text as UTF-8: support/smtp.ts undoes quoted-printable one byte per character, so
 * its `decoded` holds the UTF-8 bytes as Latin-1 characters.
 */
const mailText = (mail: ReceivedMail) => Buffer.from(mail.decoded, 'latin1').toString('utf8');

const mailNumber = (n: number) =>
  waitFor(async (): Promise<ReceivedMail | undefined> => smtp.received[n - 1], 15_000, {
    what: `mail number ${n}`,
  });

describe('mosquitto_pub → twin state → event rule → webhook, e-mail, alarm', () => {
  it('is configured through the XAPI: gateway, driver, device and twin sharing a referenceId, a routed state, two outgoing connectors, a rule', async () => {
    const gateway = await created<{ id: string; credentials: { username: string; password: string } }>(
      '/xapi/v1/connectors',
      { type: 'mqtt-broker', title: 'Cold store gateway' },
    );
    ids.gateway = gateway.id;
    Object.assign(credentials, gateway.credentials);
    const driver = await created('/xapi/v1/device-drivers', {
      title: 'Probe (JSON)',
      parser: { type: 'json' },
    });
    await created('/xapi/v1/virtual-devices', {
      device_id: 'cold-store-3-probe',
      title: 'Cold store 3 probe',
      connectorId: gateway.id,
      deviceDriverId: driver.id,
      referenceId: 'COLD-3',
    });
    ids.twin = (await created('/xapi/v1/digital-twins', { title: 'Cold store 3', referenceId: 'COLD-3' })).id;
    ids.state = (
      await created(`/xapi/v1/digital-twins/${ids.twin}/states`, {
        key: 'temperature',
        valueType: 'number',
        unit: '°C',
        source: { type: 'dynamic-routing', stateKey: 'temperature' },
      })
    ).id;
    ids.webhook = (
      await created('/xapi/v1/connectors', {
        type: 'webhook-out',
        title: 'Cold chain hook',
        config: { url: `${receiver.url}/alerts`, signingSecret: secret },
      })
    ).id;
    const smtpUrl = new URL(smtp.url);
    ids.mail = (
      await created('/xapi/v1/connectors', {
        type: 'smtp-mail',
        title: 'Plant mail',
        config: {
          host: smtpUrl.hostname,
          port: Number(smtpUrl.port),
          security: 'none',
          from: 'Stellwerk <alarms@plant.test>',
          to: ['nobody@plant.test'],
          auth: 'password',
          username: decodeURIComponent(smtpUrl.username),
          password: decodeURIComponent(smtpUrl.password),
        },
      })
    ).id;
    ids.rule = (
      await created('/xapi/v1/rules', {
        title: 'Cold store too warm',
        twinId: ids.twin,
        trigger: { type: 'event', conditions: [{ stateKey: 'temperature', operator: '>', value: -15 }] },
        commands: [
          {
            type: 'webhook',
            connectorId: ids.webhook,
            body: {
              twin: '{{twin.title}}',
              twinId: '{{twin.id}}',
              link: '{{twinlink}}',
              temperature: '{{states.temperature}}',
            },
          },
          {
            type: 'email',
            connectorId: ids.mail,
            to: [MAIL_TO],
            subject: '{{twin.title}} is too warm',
            body: '{{twin.title}} reads {{states.temperature}} °C. Open {{twinlink}}',
          },
          { type: 'alarm', category: 'Kühlkette', message: '{{twin.title}} at {{states.temperature}} °C' },
        ],
      })
    ).id;
  });

  it('a value that does not meet the condition fires nothing', async () => {
    const before = await seen();
    expect(before).toEqual({ webhooks: 0, mails: 0, alarms: 0 });
    await publish({ temperature: -18 });
    await stateBecomes(-18);
    await nothingFiresFrom(before);
  });

  it('a value that meets it fires: a signed webhook, an e-mail and an alarm entry, placeholders filled', async () => {
    await publish({ temperature: -12.5 });
    await stateBecomes(-12.5);

    const [request] = await receiver.waitFor(1, 15_000);
    expect(request!.method).toBe('POST');
    expect(request!.url).toBe('/alerts');
    expect(request!.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(verifiedBody(request!)).toEqual({
      twin: 'Cold store 3',
      twinId: ids.twin,
      link: `${PUBLIC_URL}/#/twins/${ids.twin}`,
      temperature: '-12.5',
    });
    // The signature covers the body: a changed body does not verify.
    expect(() => verifiedBody({ ...request!, body: request!.body.replace('-12.5', '-20') })).toThrow();

    const mail = await mailNumber(1);
    expect(mail.from).toBe('alarms@plant.test');
    expect(mail.to).toEqual([MAIL_TO]);
    expect(mail.raw).toContain('Subject: Cold store 3 is too warm');
    expect(mailText(mail)).toContain(`Cold store 3 reads -12.5 °C. Open ${PUBLIC_URL}/#/twins/${ids.twin}`);

    const alarms = await alarmsOfTwin();
    expect(alarms).toHaveLength(1);
    expect(alarms[0]).toMatchObject({
      category: 'Kühlkette',
      message: 'Cold store 3 at -12.5 °C',
      status: 'open',
      reference: { type: 'digitalTwin', id: ids.twin },
      source: { kind: 'rule', id: ids.rule },
    });
    const rule = expectStatus<{ lastRun: { commands: Array<{ ok: boolean }> } }>(
      await call('GET', `/xapi/v1/rules/${ids.rule}`),
      200,
    );
    expect(rule.lastRun.commands).toHaveLength(3);
    expect(rule.lastRun.commands.every((c) => c.ok)).toBe(true);
  });

  it('does not fire again while the condition keeps holding, nor when it clears', async () => {
    const before = await seen();
    expect(before).toEqual({ webhooks: 1, mails: 1, alarms: 1 });
    await publish({ temperature: -10 });
    await stateBecomes(-10);
    await publish({ temperature: -16 });
    await stateBecomes(-16);
    await nothingFiresFrom(before);
  });

  it('fires again once the condition holds again after it had cleared', async () => {
    await publish({ temperature: -8 });
    await stateBecomes(-8);
    // One delivery queue per connector, in order: the second request is the one for -8, so
    // neither -10 nor -16 had queued anything before it.
    const requests = await receiver.waitFor(2, 15_000);
    expect(requests).toHaveLength(2);
    expect(verifiedBody(requests[1]!)).toMatchObject({ twin: 'Cold store 3', temperature: '-8' });
    expect(requests[1]!.headers['webhook-id']).not.toBe(requests[0]!.headers['webhook-id']);
    const mail = await mailNumber(2);
    expect(mailText(mail)).toContain('Cold store 3 reads -8 °C');
    expect(smtp.received).toHaveLength(2);
    // The first entry is still open: the repeat is counted on it, with the latest message.
    expect((await alarmsOfTwin()).map((a) => [a.message, a.occurrenceCount])).toEqual([
      ['Cold store 3 at -8 °C', 2],
    ]);
  });
});
