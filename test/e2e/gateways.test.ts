import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCREENSHOT_DIR, startConsoleHarness, type ConsoleHarness } from './support/console-harness.js';
import { pictureStats } from './support/screenshot-check.js';
import { loginXapi, signIn, type Xapi } from './support/seed.js';

const EMAIL = 'marconi@stellwerk.test';
const PASSWORD = 'wireless telegraphy 1895';

/**
 * LoRaWAN gateways in Chromium: two gateways with locations are registered through the XAPI; an
 * uplink posted to a The Things Stack webhook connector names the first gateway in its
 * `rx_metadata`, which takes that gateway online. The console
 * lists both with status and figures, shows the device the gateway heard, creates a third
 * gateway through its form, and draws all three on the map in their status colours.
 */
let h: ConsoleHarness;
let xapi: Xapi;
let webhookUrl: string;
const ids: Record<string, string> = {};

describe('LoRaWAN gateways in the console (Chromium)', () => {
  beforeAll(async () => {
    h = await startConsoleHarness({ STELLWERK_ADMIN_EMAIL: EMAIL, STELLWERK_ADMIN_PASSWORD: PASSWORD });
    xapi = await loginXapi(h.server.baseUrl, EMAIL, PASSWORD);
    const connector = await xapi<{ id: string; apiEndpoint: string }>('POST', '/xapi/v1/connectors', {
      title: 'Water meters (TTS)',
      type: 'tts-uplink',
    });
    webhookUrl = `${h.server.baseUrl}${new URL(connector.apiEndpoint).pathname}`;
    const driver = await xapi('POST', '/xapi/v1/device-drivers', {
      title: 'Meter (JSON)',
      parser: { type: 'json' },
    });
    await xapi('POST', '/xapi/v1/virtual-devices', {
      device_id: '0004A30B001C0530',
      title: 'Meter 7',
      connectorId: connector.id,
      deviceDriverId: driver.id,
    });
    ids.roof = (
      await xapi('POST', '/xapi/v1/gateways', {
        eui: '58A0CBFFFE800001',
        title: 'Roof north',
        location: { latitude: 52.53, longitude: 13.38 },
      })
    ).id;
    ids.cellar = (
      await xapi('POST', '/xapi/v1/gateways', {
        eui: '0016c001f153a14c',
        title: 'Cellar',
        location: { latitude: 52.49, longitude: 13.45 },
      })
    ).id;
    await h.page.emulateMedia({ reducedMotion: 'reduce' });
    await signIn(h.page, h.server.baseUrl, EMAIL, PASSWORD);
  }, 180_000);

  afterAll(async () => {
    await h?.close();
  });

  it('takes a gateway online from uplink metadata, lists the gateways with status and figures and shows the devices a gateway heard', async () => {
    const { page } = h;
    // A The Things Stack uplink as its webhook posts it, heard by the roof gateway.
    const uplink = await fetch(webhookUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        end_device_ids: { device_id: 'meter-7', dev_eui: '0004A30B001C0530' },
        received_at: new Date().toISOString(),
        uplink_message: {
          f_port: 1,
          f_cnt: 42,
          frm_payload: Buffer.from(JSON.stringify({ volume: 1234.5 })).toString('base64'),
          rx_metadata: [
            { gateway_ids: { gateway_id: 'roof-gw', eui: '58A0CBFFFE800001' }, rssi: -71, snr: 8.5 },
          ],
        },
      }),
    });
    expect(uplink.status).toBe(202);
    // The network server's word takes the gateway online at once; the reception figures follow
    // once the ingest pipeline has processed the packet: wait for both before reading the list.
    await expect
      .poll(
        async () => {
          const g = await xapi<{ status: string; uplinks24h: number }>(
            'GET',
            `/xapi/v1/gateways/${ids.roof}`,
          );
          return `${g.status} ${g.uplinks24h}`;
        },
        { timeout: 15_000 },
      )
      .toBe('online 1');
    await page
      .getByRole('navigation', { name: 'Main navigation' })
      .getByRole('link', { name: 'Gateways' })
      .click();
    const rows = page.getByTestId('gateway-row');
    await expect.poll(() => rows.count()).toBe(2);
    const roof = rows.filter({ hasText: 'Roof north' });
    expect(await roof.getByTestId('gateway-status').textContent()).toBe('Online');
    expect(await roof.textContent()).toContain('-71 dBm');
    expect(await rows.filter({ hasText: 'Cellar' }).getByTestId('gateway-status').textContent()).toBe(
      'Offline',
    );
    await h.shot('gateways-01-list');

    await roof.getByRole('link', { name: 'Roof north' }).click();
    await page.getByTestId('gateway-heading').waitFor();
    const heard = page.getByTestId('gateway-devices');
    await heard.getByRole('link', { name: 'Meter 7' }).waitFor();
    expect(await heard.textContent()).toContain('8.5 dB');
    expect(await page.getByTestId('gateway-uplinks').textContent()).toBe('1');
    await h.shot('gateways-02-detail');
  });

  it('creates a gateway through the form, with the EUI stored lower-case', async () => {
    const { page } = h;
    await page.getByRole('link', { name: '← Gateways' }).click();
    await page.getByRole('button', { name: 'New gateway' }).click();
    const form = page.getByTestId('gateway-form');
    await form.getByLabel('Gateway EUI').fill('AA:BB:CC:DD:EE:FF:00:11');
    await form.getByLabel('Title').fill('Tower');
    await form.getByLabel('Latitude').fill('52.51');
    // A longitude the browser cannot hold reads as empty: refused at the field, not a dropped location.
    await form.getByLabel('Longitude').fill('1e999');
    await form.getByRole('button', { name: 'Create' }).click();
    await expect.poll(() => form.locator('#gateway-longitude').getAttribute('aria-invalid')).toBe('true');
    expect(await form.textContent()).toContain('Give latitude and longitude together');
    await form.getByLabel('Longitude').fill('13.41');
    await form.getByRole('button', { name: 'Create' }).click();
    await expect.poll(() => page.getByTestId('gateway-heading').textContent()).toBe('Tower');
    expect(await page.getByText('aabbccddeeff0011').count()).toBe(1);
    const [stored] = (
      await xapi<{ data: { eui: string; location: unknown }[] }>('GET', '/xapi/v1/gateways?pageSize=100')
    ).data.filter((g) => g.eui === 'aabbccddeeff0011');
    expect(stored?.location).toMatchObject({ latitude: 52.51, longitude: 13.41 });
  });

  it('draws the gateways on the map in their status colours', async () => {
    const { page } = h;
    await page
      .getByRole('navigation', { name: 'Main navigation' })
      .getByRole('link', { name: 'Map' })
      .click();
    const markers = page.getByTestId('gateway-marker');
    await expect.poll(() => markers.count(), { timeout: 15_000 }).toBe(3);
    expect(await page.locator('[data-testid="gateway-marker"][data-status="online"]').count()).toBe(1);
    await page.locator('.tw-map canvas.maplibregl-canvas').waitFor();
    const map = page.getByTestId('twin-map');
    await expect
      .poll(async () => Number(await map.getAttribute('data-rendered-countries')), { timeout: 15_000 })
      .toBeGreaterThan(0);
    await page.getByRole('button', { name: 'Roof north (Online)' }).click();
    await page.getByRole('link', { name: 'Open gateway' }).waitFor();
    await h.shot('gateways-03-map');
    const stats = pictureStats(await fs.readFile(path.join(SCREENSHOT_DIR, 'gateways-03-map.png')));
    expect(stats.distinctColours).toBeGreaterThan(50);

    await page.getByTestId('map-show-gateways').uncheck();
    await expect.poll(() => markers.count()).toBe(0);
    expect(h.foreignRequests, 'no request leaves loopback').toEqual([]);
  });
});
