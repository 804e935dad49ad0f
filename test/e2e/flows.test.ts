import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsoleHarness, type ConsoleHarness } from './support/console-harness.js';
import { loginXapi, seedMqttDevice, signIn, type SeededDevice, type Xapi } from './support/seed.js';

const EMAIL = 'katherine@stellwerk.test';
const PASSWORD = 'orbital mechanics 1962';

/**
 * Integration flows and outgoing connectors in Chromium: a signed PATCH webhook-out connector made
 * in the connector dialog (pointing at a receiver started here, allowed by
 * STELLWERK_OUTGOING_ALLOW_PRIVATE), a filter and a transformer with their test panels, a flow from
 * an MQTT connector's packets through both to the webhook, a packet published with `mosquitto_pub`
 * arriving transformed and signed at the receiver and the run showing in the flow's last runs, and
 * the transformer's deletion refused with the server's 409 naming the flow.
 */
interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

let h: ConsoleHarness;
let xapi: Xapi;
let receiver: http.Server;
let receiverUrl: string;
const received: Received[] = [];
const seen: {
  brokerId?: string;
  webhookId?: string;
  secret?: string;
  flowId?: string;
  transformerUrl?: string;
} = {};

const nav = (page: Page, name: string) =>
  page.getByRole('navigation', { name: 'Main navigation' }).getByRole('link', { name, exact: true }).click();
const tab = (page: Page, name: string) =>
  page
    .getByRole('navigation', { name: 'Integration pages' })
    .getByRole('link', { name, exact: true })
    .click();

let device: SeededDevice;

describe('console integration flows and outgoing connectors end to end (Chromium)', () => {
  beforeAll(async () => {
    receiver = http.createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        if (request.url!.startsWith('/hooks/'))
          received.push({ method: request.method!, url: request.url!, headers: request.headers, body });
        // A page for the consent window (a 204 would leave it on about:blank), nothing for hooks.
        if (request.url!.startsWith('/oauth/'))
          response.writeHead(200, { 'content-type': 'text/html' }).end('<title>Consent</title><p>Consent');
        else response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/boilers`;

    h = await startConsoleHarness({
      STELLWERK_ADMIN_EMAIL: EMAIL,
      STELLWERK_ADMIN_PASSWORD: PASSWORD,
      // The receiver is on loopback, which the SSRF guard refuses unless allowed (on-site use).
      STELLWERK_OUTGOING_ALLOW_PRIVATE: '127.0.0.1',
    });
    xapi = await loginXapi(h.server.baseUrl, EMAIL, PASSWORD);
    // The devices side is seeded through the XAPI: the console pages for it are tested elsewhere.
    device = await seedMqttDevice(xapi, h.mqttPort, {
      connectorTitle: 'Boiler gateway',
      driver: {
        title: 'Boiler (JSON)',
        parser: { type: 'json' },
        targetVariables: [{ key: 'temperature', type: 'number', unit: '°C' }],
      },
      device: { device_id: 'boiler-7', title: 'Boiler 7' },
    });
    seen.brokerId = device.connector.id;
  }, 180_000);

  afterAll(async () => {
    await h?.close();
    await new Promise((resolve) => receiver?.close(resolve));
  });

  it('creates a signed PATCH webhook-out connector in the connector dialog and edits it', async () => {
    const { page } = h;
    await signIn(page, h.server.baseUrl, EMAIL, PASSWORD);

    await nav(page, 'Connectors');
    await page.getByRole('button', { name: 'New connector' }).click();
    const dialog = page.getByRole('dialog', { name: 'New connector' });
    // Each outgoing kind brings its own settings, rendered from its schema; some show only when
    // another setting has a value.
    await dialog.getByLabel('MQTT (outgoing)').check();
    await dialog.getByLabel('Client cert', { exact: true }).fill('-----BEGIN CERTIFICATE-----');
    await dialog.getByLabel('Client key', { exact: true }).waitFor();
    expect(await dialog.getByLabel('QoS').inputValue()).toBe('1');
    await h.shot('flows-00a-mqtt-out-settings');
    await dialog.getByLabel('Kafka (outgoing)').check();
    await dialog.getByLabel('SASL mechanism').selectOption('scram-sha-256');
    await dialog.getByLabel('SASL password').waitFor();
    await dialog.getByLabel('SSL', { exact: true }).check();
    await dialog.getByLabel('Server CA').waitFor();
    await h.shot('flows-00b-kafka-out-settings');
    await dialog.getByLabel('Webhook (outgoing)').check();
    await dialog.getByLabel('Title', { exact: true }).fill('Boiler receiver');
    expect(await dialog.getByTestId('kind-settings').getByTestId('webhook-headers').count()).toBe(1);
    await dialog.getByLabel('URL *', { exact: true }).fill(receiverUrl);
    await dialog.getByLabel('Method').selectOption('PATCH');
    await dialog.getByRole('button', { name: 'Add header' }).click();
    await dialog.getByLabel('Header name 1').fill('X-Source');
    await dialog.getByLabel('Header value 1').fill('stellwerk-console');
    await dialog.getByRole('button', { name: 'Generate secret' }).click();
    const generated = dialog.getByTestId('generated-secret');
    await generated.getByText('Shown only now').waitFor();
    seen.secret = (await generated.locator('code').textContent())!.trim();
    expect(seen.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(await dialog.getByLabel('Signing secret', { exact: true }).inputValue()).toBe(seen.secret);
    await dialog.getByText('Delivery: queue and retries').click();
    await dialog.getByLabel('Max attempts').fill('3');
    await h.shot('flows-01-webhook-out-create');
    await dialog.getByRole('button', { name: 'Create connector' }).click();
    await dialog.waitFor({ state: 'hidden' });

    const row = page.getByTestId('connector-row').filter({ hasText: 'Boiler receiver' });
    await row.waitFor();
    expect(await row.textContent()).toContain('Webhook (outgoing)');
    const list = await xapi<{ data: Array<{ id: string; title: string; config: Record<string, unknown> }> }>(
      'GET',
      '/xapi/v1/connectors?type=webhook-out',
    );
    const stored = list.data.find((c) => c.title === 'Boiler receiver')!;
    seen.webhookId = stored.id;
    expect(stored.config).toEqual({
      url: receiverUrl,
      method: 'PATCH',
      headers: { 'X-Source': 'stellwerk-console' },
      signingSecret: '********',
      overflow: 'drop-newest',
      maxAttempts: 3,
    });

    // The edit path shows the saved settings; the secret is write-only ("stored").
    await row.getByRole('button', { name: 'Edit Boiler receiver' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit Boiler receiver' });
    await expect.poll(() => edit.getByLabel('URL *', { exact: true }).inputValue()).toBe(receiverUrl);
    expect(await edit.getByLabel('Method').inputValue()).toBe('PATCH');
    expect(await edit.getByLabel('Header value 1').inputValue()).toBe('stellwerk-console');
    expect(await edit.getByLabel('Signing secret', { exact: true }).inputValue()).toBe('');
    await edit.getByText('A value is stored. Leave empty to keep it.').waitFor();
    await edit.getByLabel('Description (optional)').fill('Boiler alerts for the plant system');
    await h.shot('flows-02-webhook-out-edit');
    await edit.getByRole('button', { name: 'Save' }).click();
    await edit.waitFor({ state: 'hidden' });
    const after = await xapi<{ description: string; config: Record<string, unknown> }>(
      'GET',
      `/xapi/v1/connectors/${seen.webhookId}`,
    );
    expect(after.description).toBe('Boiler alerts for the plant system');
    // The mask went back, so the secret is unchanged (checked below by the receiver's verification).
    expect(after.config.signingSecret).toBe('********');
    expect(after.config.headers).toEqual({ 'X-Source': 'stellwerk-console' });

    // In German the kind's settings carry its German labels; the stored secret stays masked.
    await page.getByLabel('Language').selectOption('de');
    await row.getByRole('button', { name: 'Bearbeiten Boiler receiver' }).click();
    const editDe = page.getByTestId('connector-edit-dialog');
    await expect.poll(() => editDe.getByLabel('URL *', { exact: true }).inputValue()).toBe(receiverUrl);
    expect(await editDe.getByLabel('Methode', { exact: true }).inputValue()).toBe('PATCH');
    expect(await editDe.getByLabel('Signaturschlüssel', { exact: true }).inputValue()).toBe('');
    await editDe.getByText('Ein Wert ist gespeichert. Leer lassen, um ihn zu behalten.').waitFor();
    await editDe.getByRole('button', { name: 'Abbrechen' }).click();
    await editDe.waitFor({ state: 'hidden' });
    await page.getByLabel('Sprache').selectOption('en');
  });

  it('creates an smtp-mail connector with OAuth 2.0 and opens the provider’s consent page on “Connect”', async () => {
    const { page, context } = h;
    const base = new URL(receiverUrl).origin;
    await page.getByRole('button', { name: 'New connector' }).click();
    const dialog = page.getByRole('dialog', { name: 'New connector' });
    await dialog.getByLabel('E-mail (SMTP)').check();
    await dialog.getByLabel('Title', { exact: true }).fill('Plant mail');
    await dialog.getByLabel('Host *', { exact: true }).fill('smtp.example.com');
    await dialog.getByLabel('From *', { exact: true }).fill('Stellwerk <alerts@example.com>');
    await dialog.getByLabel('To', { exact: true }).fill('ops@example.com, oncall@example.com');
    await dialog.getByLabel('Auth', { exact: true }).selectOption('oauth2');
    await dialog.getByLabel('OAuth 2.0 provider', { exact: true }).selectOption('custom');
    await dialog.getByLabel('Username', { exact: true }).fill('alerts@example.com');
    await dialog.getByLabel('OAuth 2.0 client ID', { exact: true }).fill('stellwerk-console-test');
    await dialog.getByLabel('OAuth 2.0 client secret', { exact: true }).fill('not-a-real-secret');
    await dialog.getByLabel('OAuth 2.0 auth URL', { exact: true }).fill(`${base}/oauth/authorize`);
    await dialog.getByLabel('OAuth 2.0 token URL', { exact: true }).fill(`${base}/oauth/token`);
    expect(await dialog.getByTestId('oauth-connect').textContent()).toContain('Not connected');
    await dialog.getByText(`${h.server.baseUrl}/api/v1/oauth2/custom/callback`).waitFor();
    await h.shot('flows-02a-smtp-mail-oauth');
    await dialog.getByRole('button', { name: 'Create connector' }).click();
    const created = page.getByRole('dialog', { name: 'Connector created' });
    await created.getByText('The connector “Plant mail” was created.').waitFor();
    const [popup] = await Promise.all([
      context.waitForEvent('page'),
      created.getByRole('button', { name: 'Connect', exact: true }).click(),
    ]);
    await popup.waitForURL(/\/oauth\/authorize\?/);
    const consent = new URL(popup.url());
    expect(consent.origin).toBe(base);
    expect(consent.searchParams.get('client_id')).toBe('stellwerk-console-test');
    expect(consent.searchParams.get('redirect_uri')).toBe(
      `${h.server.baseUrl}/api/v1/oauth2/custom/callback`,
    );
    expect(consent.searchParams.get('state')).toBeTruthy();
    await popup.close();
    await created.getByRole('button', { name: 'Check connection' }).click();
    await created.getByText('Not connected').waitFor();
    await created.getByRole('button', { name: 'Close' }).click();
    const mail = (
      await xapi<{ data: Array<{ config: Record<string, unknown> }> }>(
        'GET',
        '/xapi/v1/connectors?type=smtp-mail',
      )
    ).data[0]!;
    expect(mail.config).toMatchObject({
      host: 'smtp.example.com',
      from: 'Stellwerk <alerts@example.com>',
      to: ['ops@example.com', 'oncall@example.com'],
      auth: 'oauth2',
      oauth2Provider: 'custom',
      oauth2ClientSecret: '********',
    });
  });

  it('creates a filter and a transformer and runs their test panels', async () => {
    const { page } = h;
    await nav(page, 'Integration');
    await page.getByText('No flows yet').waitFor();
    await tab(page, 'Filters');
    await page.getByRole('button', { name: 'New filter' }).click();
    await page.getByLabel('Title').fill('Hot only');
    expect(await page.getByLabel('Input type').inputValue()).toBe('Generic');
    await page
      .getByRole('textbox', { name: 'Code' })
      .fill('function filter(input) {\n  return input.states.temperature > 30;\n}\n');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.waitForURL(/#\/flows\/filters\/[0-9a-f-]{36}$/);
    await page.getByLabel('Sample input (JSON)').fill('{"states": {"temperature": 12}}');
    await page.getByRole('button', { name: 'Run test' }).click();
    await expect.poll(() => page.getByTestId('script-test-verdict').textContent()).toBe('Stops the item');

    await nav(page, 'Integration');
    await tab(page, 'Transformers');
    await page.getByRole('button', { name: 'New transformer' }).click();
    await page.getByLabel('Title').fill('Alert body');
    await page.getByLabel('Description (optional)').fill('What the plant system wants');
    await page
      .getByRole('textbox', { name: 'Code' })
      .fill(
        'function transform(input, meta) {\n  return { alert: "hot", temperature: input.states.temperature, flow: meta.flowTitle || null };\n}\n',
      );
    // "Save and run test": a new transformer is saved first, then tested.
    await page.getByLabel('Sample input (JSON)').fill('{"states": {"temperature": 45}}');
    await page.getByRole('button', { name: 'Save and run test' }).click();
    const output = page.getByTestId('script-test-output');
    await expect.poll(() => output.textContent()).toContain('"temperature": 45');
    expect(JSON.parse((await output.textContent())!)).toEqual({ alert: 'hot', temperature: 45, flow: null });
    expect(page.url()).toMatch(/#\/flows\/transformers\/[0-9a-f-]{36}$/);
    seen.transformerUrl = page.url();
    await h.shot('flows-03-transformer-test');

    // A sample the code cannot handle: the server's 422 error body is shown.
    await page.getByLabel('Sample input (JSON)').fill('{}');
    await page.getByRole('button', { name: 'Run test' }).click();
    const error = page.getByTestId('script-test').getByTestId('error');
    await expect.poll(() => error.getAttribute('data-code')).toBe('SCRIPT_ERROR');
    expect(await error.getByTestId('error-message').textContent()).toBe('The script failed.');
    await h.shot('flows-04-transformer-test-error');
  });

  it('builds a flow from the MQTT connector through both steps to the webhook, and shows its run', async () => {
    const { page } = h;
    await nav(page, 'Integration');
    await page.getByRole('button', { name: 'New flow' }).click();
    await page.getByTestId('flow-heading').waitFor();
    await page.getByLabel('Title').fill('Hot boilers');
    await page.getByTestId('flow-source').getByLabel('Boiler gateway').check();
    // Outgoing connectors are not sources; only outgoing ones are targets.
    expect(await page.getByTestId('flow-source').getByLabel('Boiler receiver').count()).toBe(0);
    const choice = page.getByLabel('Choose a filter or transformer');
    await choice.selectOption({ label: 'Alert body' });
    await page.getByRole('button', { name: 'Add step' }).click();
    await choice.selectOption({ label: 'Hot only' });
    await page.getByRole('button', { name: 'Add step' }).click();
    const steps = page.getByTestId('flow-step');
    expect(await steps.allTextContents()).toEqual([
      expect.stringContaining('Alert body'),
      expect.stringContaining('Hot only'),
    ]);
    // Reorder with the keyboard: focus "move up" of the filter, press Enter.
    await page.getByRole('button', { name: 'Move “Hot only” up' }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => steps.first().textContent()).toContain('Hot only');
    // The focus stays on the moved row (now first: its "down" button, since "up" is disabled).
    expect(await page.locator(':focus').textContent()).toContain('Move “Hot only” down');

    const targets = page.getByLabel('Choose an outgoing connector');
    expect(await targets.locator('option').allTextContents()).toEqual([
      'Choose an outgoing connector',
      'Boiler receiver (Webhook (outgoing))',
      'Plant mail (E-mail (SMTP))',
    ]);
    await targets.selectOption({ label: 'Boiler receiver (Webhook (outgoing))' });
    await page.getByRole('button', { name: 'Add target' }).click();
    await h.shot('flows-05-flow-editor');
    await page.getByRole('button', { name: 'Create flow' }).click();
    await page.waitForURL(/#\/flows\/[0-9a-f-]{36}$/);
    seen.flowId = page.url().split('/').at(-1);
    const stored = await xapi<{ source: unknown; steps: Array<{ type: string }>; targets: unknown }>(
      'GET',
      `/xapi/v1/integration-flows/${seen.flowId}`,
    );
    expect(stored.source).toEqual({ type: 'packets', connectorIds: [seen.brokerId], deviceIds: [] });
    expect(stored.steps.map((s) => s.type)).toEqual(['filter', 'transformer']);
    expect(stored.targets).toEqual([{ connectorId: seen.webhookId }]);
    await page.getByText('No runs yet').waitFor();

    await device.publish({ temperature: 12 });
    await device.publish({ temperature: 45 });
    await expect.poll(() => received.length, { timeout: 20_000 }).toBe(1);
    const [request] = received;
    expect(request!.method).toBe('PATCH');
    expect(request!.url).toBe('/hooks/boilers');
    expect(request!.headers['x-source']).toBe('stellwerk-console');
    const signature = {
      'webhook-id': String(request!.headers['webhook-id']),
      'webhook-timestamp': String(request!.headers['webhook-timestamp']),
      'webhook-signature': String(request!.headers['webhook-signature']),
    };
    // The secret generated in the console signs the request (Standard Webhooks).
    expect(new Webhook(seen.secret!).verify(request!.body, signature)).toEqual({
      alert: 'hot',
      temperature: 45,
      flow: 'Hot boilers',
    });

    // The last runs panel refreshes by itself: the sent run first, the filtered one below it.
    const runs = page.getByTestId('flow-run');
    await expect.poll(() => runs.count(), { timeout: 20_000 }).toBe(2);
    expect(await runs.first().getByTestId('run-outcome').textContent()).toBe('Sent');
    expect(await runs.nth(1).getByTestId('run-outcome').textContent()).toBe('Filtered');
    expect(await runs.first().getByTestId('run-input').textContent()).toContain('"temperature": 45');
    expect(JSON.parse((await runs.first().getByTestId('run-output').textContent())!)).toEqual({
      alert: 'hot',
      temperature: 45,
      flow: 'Hot boilers',
    });
    await h.shot('flows-06-flow-runs');

    // Deactivated from the list, the flow runs on nothing.
    await page.getByRole('link', { name: '← Integration flows' }).click();
    const row = page.getByTestId('flow-row').filter({ hasText: 'Hot boilers' });
    await row.getByLabel('Flow “Hot boilers” active').uncheck();
    await expect
      .poll(
        async () =>
          (await xapi<{ active: boolean }>('GET', `/xapi/v1/integration-flows/${seen.flowId}`)).active,
      )
      .toBe(false);
    await h.shot('flows-07-flow-list');
  });

  it('refuses to delete the transformer a flow uses and names the flow', async () => {
    const { page } = h;
    await page.goto(seen.transformerUrl!);
    await page.getByTestId('script-heading').waitFor();
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete transformer' });
    await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
    await expect
      .poll(async () => (await dialog.getByTestId('error').innerText()).trim())
      .toBe('It cannot be deleted while it is still in use.');
    expect(await dialog.getByTestId('error').getAttribute('data-code')).toBe('DELETE_BLOCKED');
    const blocker = dialog.getByTestId('delete-blockers').getByRole('link', { name: 'Hot boilers' });
    expect(await blocker.getAttribute('href')).toBe(`#/flows/${seen.flowId}`);
    expect(await dialog.getByRole('button', { name: 'Delete', exact: true }).isDisabled()).toBe(true);
    await h.shot('flows-08-delete-blocked');

    // Dark theme, for the look of the editor and the runs.
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('button', { name: 'Switch to dark theme' }).click();
    await page.goto(`${h.server.baseUrl}/#/flows/${seen.flowId}`);
    await page.getByTestId('flow-run').first().waitFor();
    await h.shot('flows-09-flow-editor-dark');
    expect(h.foreignRequests).toEqual([]);
  });
});
