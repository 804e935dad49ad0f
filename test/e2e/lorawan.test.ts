import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsoleHarness, type ConsoleHarness } from './support/console-harness.js';
import { loginXapi, signIn, type Xapi } from './support/seed.js';
import { lorawanFixture } from '../integration/support/lorawan.js';
import { WATER_METER_CODEC } from '../integration/support/ts013-codecs.js';

const EMAIL = 'ada@stellwerk.test';
const PASSWORD = 'analytical engine 1843';
/** The EUI as The Things Stack shows it; the fixture's device. */
const DEV_EUI = '0004A30B001C0530';

/**
 * A vendor-style TS013 codec pasted unchanged into the console's driver editor decodes real
 * The Things Stack uplinks by their fPort, on a connector and a device made in the console: the device page shows the decoded values (nested ones
 * under dotted keys), the network server's metadata as `_meta.*` states, and the packet history
 * row with port, RSSI, gateway and the codec's warning.
 */
let h: ConsoleHarness;
let xapi: Xapi;

/** The documented TTS uplink with the bytes, port, frame counter and RSSI of this story. */
function uplink(bytes: number[], fPort: number, fCnt: number, rssi: number): Record<string, unknown> {
  const message = lorawanFixture('tts-docs-uplink');
  const up = message.uplink_message as Record<string, unknown>;
  const [gateway] = up.rx_metadata as Record<string, unknown>[];
  return {
    ...message,
    uplink_message: {
      ...up,
      f_port: fPort,
      f_cnt: fCnt,
      frm_payload: Buffer.from(bytes).toString('base64'),
      rx_metadata: [{ ...gateway, rssi, channel_rssi: rssi }],
    },
  };
}

describe('LoRaWAN codec on real network-server uplinks (Chromium)', () => {
  beforeAll(async () => {
    h = await startConsoleHarness({ STELLWERK_ADMIN_EMAIL: EMAIL, STELLWERK_ADMIN_PASSWORD: PASSWORD });
    xapi = await loginXapi(h.server.baseUrl, EMAIL, PASSWORD);
  }, 180_000);

  afterAll(async () => {
    await h?.close();
  });

  it('decodes The Things Stack uplinks on fPort 1 and 2 with a pasted codec and shows their metadata', async () => {
    const { page } = h;
    await signIn(page, h.server.baseUrl, EMAIL, PASSWORD);
    await page.goto(`${h.server.baseUrl}/#/drivers`);
    await page.getByRole('button', { name: 'New driver' }).click();
    await page.getByTestId('driver-heading').waitFor();
    await page.getByLabel('Title').fill('Water meter codec');
    await page.getByLabel('JavaScript').check();
    await page.getByLabel('Script', { exact: true }).fill(WATER_METER_CODEC);
    await page.getByRole('button', { name: 'Create driver' }).click();
    await page.waitForURL(/#\/drivers\/[0-9a-f-]{36}$/);
    const driverId = page.url().split('/').at(-1)!;

    await page.goto(`${h.server.baseUrl}/#/connectors`);
    await page.getByRole('button', { name: 'New connector' }).click();
    const connectorDialog = page.getByRole('dialog', { name: 'New connector' });
    await connectorDialog.getByLabel('The Things Stack').check();
    await connectorDialog.getByLabel('Title').fill('TTS water meters');
    await connectorDialog.getByRole('button', { name: 'Create connector' }).click();
    const created = page.getByRole('dialog', { name: 'Connector created' });
    const webhookUrl = (await created.getByTestId('webhook-url').textContent())!.trim();
    await created.getByRole('button', { name: 'I have stored them' }).click();

    await page.goto(`${h.server.baseUrl}/#/devices`);
    await page.getByRole('button', { name: 'New device' }).click();
    const deviceDialog = page.getByRole('dialog', { name: 'New device' });
    await expect
      .poll(() => deviceDialog.getByLabel('Connector').locator('option:checked').textContent())
      .toContain('TTS water meters');
    await deviceDialog.getByLabel('Device driver').selectOption(driverId);
    await deviceDialog.getByLabel('Device id').fill(DEV_EUI);
    await deviceDialog.getByLabel('Title', { exact: true }).fill('Water meter');
    await deviceDialog.getByRole('button', { name: 'Create device' }).click();
    await page.getByTestId('device-title').waitFor();
    const deviceId = page.url().split('/').at(-1)!;
    const stored = await xapi<{ device_id: string; deviceDriverId: string }>(
      'GET',
      `/xapi/v1/virtual-devices/${deviceId}`,
    );
    // The EUI as The Things Stack writes it addresses the device the same as the lower-cased one.
    expect(stored).toMatchObject({ device_id: DEV_EUI.toLowerCase(), deviceDriverId: driverId });
    await expect
      .poll(() => page.getByTestId('live-status').textContent(), { timeout: 15_000 })
      .toMatch(/Live/);
    const post = async (message: unknown) => {
      const response = await fetch(webhookUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(message),
      });
      expect(response.status, await response.text()).toBe(202);
    };
    const state = (key: string) => page.getByTestId(`state-${key}`).getByTestId('state-value');

    // Port 1: the index frame, 123.456 m³ at 3.0 V (below the codec's 3.1 V: a warning).
    await post(uplink([0x00, 0x01, 0xe2, 0x40, 0x00, 0x64], 1, 7, -35));
    await expect.poll(() => state('volume').textContent(), { timeout: 15_000 }).toBe('123.456');
    expect(await state('battery.voltage').textContent()).toBe('3');
    expect(await state('battery.low').textContent()).toBe('true');
    expect(await state('medium').textContent()).toBe('water');
    expect(await state('_meta.fPort').textContent()).toBe('1');
    expect(await state('_meta.rssi').textContent()).toBe('-35');
    // The state names the gateway by its EUI (stable across network servers), the history row by its id.
    expect(await state('_meta.gateway').textContent()).toBe('9c5c8e00001a05c4');

    // Port 2: the alarm list, under indexed dotted keys; the metadata follows the newest uplink.
    await post(uplink([0x01, 0x04], 2, 8, -101));
    await expect.poll(() => state('alarmCount').textContent(), { timeout: 15_000 }).toBe('2');
    expect(await state('alarms.0.name').textContent()).toBe('leak');
    expect(await state('alarms.1.name').textContent()).toBe('tamper');
    await expect.poll(() => state('_meta.fPort').textContent()).toBe('2');
    expect(await state('_meta.rssi').textContent()).toBe('-101');
    expect(await state('_meta.fCnt').textContent()).toBe('8');
    // Port 1's values stay as that uplink left them.
    expect(await state('volume').textContent()).toBe('123.456');

    const rows = page.getByTestId('packet-history').locator('tbody tr');
    await page.getByTestId('packet-history').getByRole('button', { name: 'Refresh' }).click();
    await expect.poll(() => rows.count(), { timeout: 10_000 }).toBe(2);
    // Newest first.
    expect(await rows.nth(0).getByTestId('packet-meta').textContent()).toMatch(
      /fPort 2 · fCnt 8 · -101 dBm · SNR 5 dB · gtw1/,
    );
    expect(await rows.nth(0).getByTestId('packet-warnings').count()).toBe(0);
    // Binary frames read as hex, as the network server and the codec's author show them.
    expect(await rows.nth(0).getByTestId('packet-payload').textContent()).toBe('hex: 01 04');
    expect(await rows.nth(1).getByTestId('packet-meta').textContent()).toMatch(
      /fPort 1 · fCnt 7 · -35 dBm · SNR 5 dB · gtw1/,
    );
    expect(await rows.nth(1).getByTestId('packet-warnings').textContent()).toBe('battery voltage low: 3 V');
    expect(await rows.nth(1).getByTestId('packet-payload').textContent()).toBe('hex: 00 01 e2 40 00 64');
    await h.shot('lorawan-01-device-codec-meta');

    // A LoRaWAN network server takes a port and may ask for an acknowledgement: the form offers both.
    const downlinks = page.getByTestId('downlinks');
    expect(await downlinks.getByLabel('fPort').count()).toBe(1);
    expect(await downlinks.getByLabel('Confirmed').count()).toBe(1);

    await page.getByLabel('Language').selectOption('de');
    await expect
      .poll(() => page.getByTestId('packet-history').getByRole('list', { name: 'Codec-Warnungen' }).count())
      .toBe(1);
    await h.shot('lorawan-02-device-codec-meta-de');
    expect(h.foreignRequests, 'no request leaves loopback').toEqual([]);
  });
});
