import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../integration/support/mosquitto.js';
import { startOpcuaServer, type OpcuaPeer } from '../integration/support/opcua-server.js';
import { startConsoleHarness, type ConsoleHarness } from './support/console-harness.js';
import { loginXapi, signIn, type Xapi } from './support/seed.js';

const EMAIL = 'kirchhoff@stellwerk.test';
const PASSWORD = 'circuit laws 1845';

/**
 * The OPC UA node picker in Chromium against a real node-opcua server: an opcua connector without
 * mapped nodes is edited, the server is browsed through the connector's session from Objects into
 * the Boiler object, its Temperature variable is added for device `boiler-1` and saved, and the
 * value the server holds arrives as that device's `Temperature` state.
 */
let h: ConsoleHarness;
let xapi: Xapi;
let peer: OpcuaPeer;
let dir: string;
let connectorId: string;
let deviceId: string;

describe('OPC UA node picker (Chromium)', () => {
  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'stellwerk-opcua-picker-'));
    peer = await startOpcuaServer(dir, await freePort());
    h = await startConsoleHarness({
      STELLWERK_ADMIN_EMAIL: EMAIL,
      STELLWERK_ADMIN_PASSWORD: PASSWORD,
      // The OPC UA server of this test listens on loopback, which the outgoing guard refuses by default.
      STELLWERK_OUTGOING_ALLOW_PRIVATE: '127.0.0.0/8',
    });
    xapi = await loginXapi(h.server.baseUrl, EMAIL, PASSWORD);
    const driver = await xapi('POST', '/xapi/v1/device-drivers', { title: 'JSON', parser: { type: 'json' } });
    connectorId = (
      await xapi('POST', '/xapi/v1/connectors', {
        title: 'Boiler house PLC',
        type: 'opcua',
        config: { endpointUrl: peer.url, samplingIntervalMs: 100, publishingIntervalMs: 100, nodes: [] },
      })
    ).id;
    deviceId = (
      await xapi('POST', '/xapi/v1/virtual-devices', {
        device_id: 'boiler-1',
        title: 'Boiler 1',
        connectorId,
        deviceDriverId: driver.id,
      })
    ).id;
    await signIn(h.page, h.server.baseUrl, EMAIL, PASSWORD);
  }, 180_000);

  afterAll(async () => {
    await h?.close();
    await peer?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('maps a browsed variable to a device state and the value arrives', async () => {
    // The picker browses through the connector's open session: wait until it has one.
    await expect
      .poll(
        async () =>
          (await xapi<{ connected: boolean }>('GET', `/xapi/v1/connectors/${connectorId}/opcua/browse`))
            .connected,
        { timeout: 30_000 },
      )
      .toBe(true);
    const { page } = h;
    await page.goto(`${h.server.baseUrl}/#/connectors`);
    const row = page.getByTestId('connector-row').filter({ hasText: 'Boiler house PLC' });
    await row.getByRole('button', { name: 'Edit Boiler house PLC' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit Boiler house PLC' });
    const picker = edit.getByTestId('opcua-picker');
    await picker.getByRole('button', { name: 'Browse the server' }).click();
    await picker.getByRole('button', { name: 'Open Boiler' }).click();
    await picker.getByRole('navigation', { name: 'Path' }).getByRole('button', { name: 'Boiler' }).waitFor();
    await picker.getByLabel('Device id for added nodes').fill('boiler-1');
    await picker.getByRole('button', { name: 'Add: Temperature' }).click();
    await picker.getByText('Mapped').waitFor();
    const nodes = JSON.parse(await edit.locator('#kind-setting-nodes').inputValue()) as unknown;
    expect(nodes).toEqual([
      { nodeId: 'ns=1;s=Boiler.Temperature', deviceId: 'boiler-1', state: 'Temperature' },
    ]);
    await h.shot('opcua-01-node-picker');
    await edit.getByRole('button', { name: 'Save' }).click();
    await edit.waitFor({ state: 'hidden' });

    const saved = await xapi<{ config: { nodes: unknown } }>('GET', `/xapi/v1/connectors/${connectorId}`);
    expect(saved.config.nodes).toEqual(nodes);
    // The server's value (21.5, set at its start) becomes the device's state once the session maps it.
    await expect
      .poll(
        async () => {
          const states = await xapi<{ data: Array<{ key: string; value: unknown }> }>(
            'GET',
            `/xapi/v1/virtual-devices/${deviceId}/states`,
          );
          return states.data.find((s) => s.key === 'Temperature')?.value;
        },
        { timeout: 30_000 },
      )
      .toBe(21.5);
  });
});
