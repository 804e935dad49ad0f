import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seriousViolations } from './support/axe-check.js';
import { startConsoleHarness, type ConsoleHarness } from './support/console-harness.js';
import { addRoutedState, loginXapi, publishJson, seedMqttDevice, signIn, type Xapi } from './support/seed.js';

const EMAIL = 'grace@stellwerk.test';
const PASSWORD = 'compiler pioneer 1952';

/**
 * The overview page in Chromium: three devices on an MQTT connector whose packets, published with
 * `mosquitto_pub`, make one Healthy and one Critical by the driver's health rule (the third never
 * sends: Unknown), a deactivated second connector, rules raising critical and major alarms, and two
 * gateways never heard (offline). The page shows these counts and the ingest of the last hour, an
 * alarm raised while it is open arrives live, its links open the lists filtered, axe finds no
 * violations, and the German UI shows it in German.
 */
let h: ConsoleHarness;
let xapi: Xapi;
let publish: (deviceId: string, payload: unknown) => Promise<void>;
let twinId: string;

interface Overview {
  devices?: { total: number; byHealth: { state: string; count: number }[] };
  ingest?: { packetsIn: number };
  alarms?: { open: number };
}

const rule = (title: string, severity: string, threshold: number) =>
  xapi('POST', '/xapi/v1/rules', {
    title,
    twinId,
    trigger: { type: 'event', conditions: [{ stateKey: 'pressure', operator: '>', value: threshold }] },
    commands: [{ type: 'alarm', severity, message: `${title}: {{states.pressure}} bar` }],
  });

describe('overview page (Chromium)', () => {
  beforeAll(async () => {
    h = await startConsoleHarness({ STELLWERK_ADMIN_EMAIL: EMAIL, STELLWERK_ADMIN_PASSWORD: PASSWORD });
    xapi = await loginXapi(h.server.baseUrl, EMAIL, PASSWORD);
    const seeded = await seedMqttDevice(xapi, h.mqttPort, {
      connectorTitle: 'Waterworks gateway',
      driver: {
        title: 'Pump (JSON)',
        parser: { type: 'json' },
        targetVariables: [
          { key: 'temperature', type: 'number', unit: '°C' },
          { key: 'pressure', type: 'number', unit: 'bar' },
        ],
        healthConfig: { rules: [{ state: 'temperature', operator: '>', value: 80, result: 'Critical' }] },
      },
      device: { device_id: 'pump-1', title: 'Pump 1', referenceId: 'PUMP-1' },
    });
    const { connector, driverId } = seeded;
    for (const [deviceId, title] of [
      ['pump-2', 'Pump 2'],
      ['pump-3', 'Pump 3'],
    ])
      await xapi('POST', '/xapi/v1/virtual-devices', {
        device_id: deviceId,
        title,
        connectorId: connector.id,
        deviceDriverId: driverId,
      });
    publish = (deviceId, payload) =>
      publishJson({ mqttPort: h.mqttPort, connector, device_id: deviceId }, payload);
    const spare = await xapi('POST', '/xapi/v1/connectors', { type: 'webhook-in', title: 'Spare webhook' });
    await xapi('POST', `/xapi/v1/connectors/${spare.id}/deactivate`);
    twinId = (await xapi('POST', '/xapi/v1/digital-twins', { title: 'Pump 1', referenceId: 'PUMP-1' })).id;
    await addRoutedState(xapi, twinId, {
      key: 'pressure',
      title: 'Pressure',
      valueType: 'number',
      unit: 'bar',
    });
    await rule('Burst risk', 'critical', 8);
    await rule('High pressure', 'major', 5);
    for (const [eui, title] of [
      ['58A0CBFFFE800001', 'Roof north'],
      ['0016C001F153A14C', 'Cellar'],
    ])
      await xapi('POST', '/xapi/v1/gateways', { eui, title });

    await publish('pump-1', { temperature: 21, pressure: 9 });
    await publish('pump-2', { temperature: 95 });
  }, 180_000);

  afterAll(async () => {
    await h?.close();
  });

  it('shows devices by health, connectors, ingest, alarms by severity and offline gateways, and an alarm arriving live', async () => {
    // The first packet of an Unknown device is evaluated promptly; counters reach the table within 2 s.
    await expect
      .poll(
        async () => {
          const o = await xapi<Overview>('GET', '/xapi/v1/overview');
          return [
            o.devices?.byHealth.map((b) => `${b.state}:${b.count}`).sort(),
            o.ingest?.packetsIn,
            o.alarms?.open,
          ];
        },
        { timeout: 20_000 },
      )
      .toEqual([['Critical:1', 'Healthy:1', 'Unknown:1'], 2, 2]);
    await h.page.emulateMedia({ reducedMotion: 'reduce' });
    await signIn(h.page, h.server.baseUrl, EMAIL, PASSWORD);
    const { page } = h;
    const text = (id: string) => page.getByTestId(id).first().textContent();
    await expect.poll(() => text('devices-total'), { timeout: 10_000 }).toBe('3');
    expect(await page.getByTestId('health-Critical').textContent()).toMatch(/Critical\s*1/);
    expect(await page.getByTestId('health-Healthy').textContent()).toMatch(/Healthy\s*1/);
    expect(await page.getByTestId('health-Unknown').textContent()).toMatch(/Unknown\s*1/);
    expect(await text('connectors-total')).toBe('2');
    expect(await text('connectors-inactive')).toMatch(/Deactivated\s*1/);
    expect(await text('ingest-total')).toBe('2');
    expect(await text('alarms-open')).toBe('2');
    expect(await text('severity-critical')).toMatch(/Critical\s*1/);
    expect(await text('severity-major')).toMatch(/Major\s*1/);
    expect(await text('severity-minor')).toMatch(/Minor\s*0/);
    expect(await text('gateways-offline')).toBe('2');
    expect(await page.getByTestId('recent-alarm').count()).toBe(2);
    await h.shot('overview-01-site');

    // Raised while the page is open: over the live socket, without a reload or the 30 s poll.
    await rule('Pressure rising', 'minor', 2);
    await publish('pump-1', { pressure: 9.5 });
    await expect.poll(() => text('alarms-open'), { timeout: 10_000 }).toBe('3');
    expect(await text('severity-minor')).toMatch(/Minor\s*1/);
    expect(await page.getByTestId('recent-alarm').count()).toBe(3);
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('opens the lists filtered from its counts', async () => {
    const { page } = h;
    await page.getByTestId('health-Critical').click();
    await page.waitForURL(/#\/devices\?healthState=Critical$/);
    await expect
      .poll(() => page.getByTestId('device-row').allTextContents(), { timeout: 10_000 })
      .toHaveLength(1);
    expect(await page.getByTestId('device-row').textContent()).toContain('Pump 2');
    expect(await page.getByLabel('Health').inputValue()).toBe('Critical');
    await h.shot('overview-02-devices-critical');

    await page.goBack();
    await page.getByTestId('severity-critical').click();
    await page.waitForURL(/#\/alarms\?status=open&severity=critical$/);
    await expect.poll(() => page.getByTestId('alarm-row').count(), { timeout: 10_000 }).toBe(1);
    expect(await page.getByTestId('alarm-row').getAttribute('data-severity')).toBe('critical');

    await page.goBack();
    await page.getByTestId('connectors-inactive').click();
    await expect.poll(() => page.getByTestId('connector-row').allTextContents()).toHaveLength(1);
    expect(await page.getByTestId('connector-row').textContent()).toContain('Spare webhook');

    await page.goBack();
    await page.getByRole('link', { name: 'Gateways offline' }).click();
    await expect.poll(() => page.getByTestId('gateway-row').allTextContents()).toHaveLength(2);
  });

  it('shows the overview in German', async () => {
    const { page } = h;
    await page.goto(`${h.server.baseUrl}/#/`);
    await page.getByLabel('Language').selectOption('de');
    await page.getByRole('heading', { name: 'Zustand der Anlage' }).waitFor();
    expect(await page.getByTestId('health-Critical').textContent()).toMatch(/Kritisch\s*1/);
    expect(await page.getByTestId('health-Healthy').textContent()).toMatch(/Gesund\s*1/);
    expect(await page.getByTestId('connectors-inactive').textContent()).toMatch(/Deaktiviert\s*1/);
    expect(await page.getByTestId('severity-major').textContent()).toMatch(/Hoch\s*1/);
    expect(await page.getByTestId('overview-updated').textContent()).toMatch(/^Aktualisiert \d{1,2}\. /);
    expect(await page.getByRole('heading', { name: 'Gateways offline' }).count()).toBe(1);
    expect(await seriousViolations(page)).toEqual([]);
    await h.shot('overview-03-german');
    await page.getByLabel('Sprache').selectOption('en');
  });
});
