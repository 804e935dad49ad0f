import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seriousViolations } from './support/axe-check.js';
import { startConsoleHarness, type ConsoleHarness } from './support/console-harness.js';
import { loginXapi, signIn, type Xapi } from './support/seed.js';

const ADMIN = { email: 'margaret@stellwerk.test', password: 'apollo guidance 1969' };
const VIEWER = { email: 'annex-viewer@stellwerk.test', password: 'annex viewer password' };

/**
 * A fresh site in Chromium, as a new administrator finds it: the overview shows the first steps in
 * order (connector, devices, twin, then dashboards and rules), each linked and marked done from the
 * site's counts as the administrator works through them, and gone once devices and twins exist. On
 * the way: the empty device list names its buttons, "New device" without a connector leads to
 * creating one, the new-connector dialog describes each kind (no repository path on the page), and
 * a connector is named by its kind, not its type id. A user whose roles allow only some steps gets
 * links for those alone.
 */
let h: ConsoleHarness;
let xapi: Xapi;

const steps = () => h.page.getByTestId('first-steps');
const done = (step: string) => h.page.getByTestId(`first-step-${step}`).getAttribute('data-done');
const expectAccessible = async (where: string) => expect(await seriousViolations(h.page), where).toEqual([]);

async function openOverview(): Promise<void> {
  await h.page
    .getByRole('navigation', { name: 'Main navigation' })
    .getByRole('link', { name: 'Overview' })
    .click();
  await h.page.getByTestId('overview-updated').waitFor();
}

describe('first steps on a fresh site (Chromium)', () => {
  beforeAll(async () => {
    h = await startConsoleHarness({
      STELLWERK_ADMIN_EMAIL: ADMIN.email,
      STELLWERK_ADMIN_PASSWORD: ADMIN.password,
    });
    xapi = await loginXapi(h.server.baseUrl, ADMIN.email, ADMIN.password);
    const annex = await xapi('POST', '/xapi/v1/accounts', { title: 'Annex' });
    const role = await xapi('POST', '/xapi/v1/roles', {
      name: 'Twin builder',
      permissions: ['VirtualDevice.read', 'digitalTwin.manage', 'dashboard.manage'],
      accountId: annex.id,
    });
    await xapi('POST', '/xapi/v1/users', {
      email: VIEWER.email,
      name: 'Annex viewer',
      password: VIEWER.password,
      roleIds: [role.id],
      accountId: annex.id,
    });
  }, 180_000);

  afterAll(async () => {
    await h?.close();
  });

  it('shows the steps in order on an empty site, each linked to its page and none done', async () => {
    await h.page.emulateMedia({ reducedMotion: 'reduce' });
    await signIn(h.page, h.server.baseUrl, ADMIN.email, ADMIN.password);
    const panel = steps();
    await panel.getByRole('heading', { name: 'First steps' }).waitFor();
    expect(await panel.getByRole('listitem').allTextContents()).toEqual([
      expect.stringMatching(/^1\. Connect a data source\s*Not yet.*built in.*LoRaWAN/),
      expect.stringMatching(/^2\. Add devices\s*Not yet.*“New device” creates one, “Import CSV” many/),
      expect.stringMatching(
        /^3\. Create a digital twin\s*Not yet.*states whose source is a value of a device/,
      ),
      expect.stringMatching(/^4\. Then: watch and react.*dashboard.*rules/),
    ]);
    const links = await Promise.all(
      (await panel.getByRole('link').all()).map(async (a) => [
        (await a.textContent())?.trim(),
        await a.getAttribute('href'),
      ]),
    );
    expect(links).toEqual([
      ['Create a connector', '#/connectors?new=1'],
      ['Add devices', '#/devices'],
      ['Create a twin', '#/twins'],
      ['Dashboards', '#/dashboards'],
      ['Rules', '#/rules'],
    ]);
    expect([await done('connector'), await done('devices'), await done('twin'), await done('use')]).toEqual([
      'false',
      'false',
      'false',
      null,
    ]);
    await h.shot('first-steps-01-empty-site');
    await expectAccessible('overview with first steps');

    await h.page.getByLabel('Language').selectOption('de');
    await panel.getByRole('heading', { name: 'Erste Schritte' }).waitFor();
    expect(await panel.textContent()).toContain(
      '„Neues Gerät“ legt eines an, „CSV importieren“ viele auf einmal',
    );
    expect(await panel.getByRole('link', { name: 'Konnektor anlegen' }).count()).toBe(1);
    await panel.getByRole('link', { name: 'Geräte anlegen' }).click();
    await h.page.getByRole('heading', { name: 'Geräte', level: 1 }).waitFor();
    await expect
      .poll(() => h.page.getByTestId('devices-table').textContent())
      .toContain(
        'Noch keine Geräte. „Neues Gerät“ legt eines an, „CSV importieren“ viele auf einmal aus einer CSV-Datei.',
      );
    await h.page.getByLabel('Sprache').selectOption('en');
  });

  it('points the empty device list at its buttons, and "New device" without a connector at creating one', async () => {
    const { page } = h;
    await expect
      .poll(() => page.getByTestId('devices-table').textContent())
      .toContain('No devices yet. “New device” creates one, “Import CSV” many at once from a CSV file.');
    expect(await page.getByRole('button', { name: 'Import CSV' }).count()).toBe(1);

    await page.getByRole('button', { name: 'New device' }).click();
    const dialog = page.getByRole('dialog', { name: 'New device' });
    await dialog.getByTestId('device-needs-connector').waitFor();
    expect(await dialog.textContent()).toContain('this account has no connector that receives packets yet');
    expect(await dialog.getByLabel('Device id').count()).toBe(0);
    await expectAccessible('new device without a connector');
    await dialog.getByRole('link', { name: 'Create a connector' }).click();
    await page.waitForURL(/#\/connectors\?new=1$/);

    const create = page.getByRole('dialog', { name: 'New connector' });
    await create.getByLabel('MQTT broker').waitFor();
    // Each kind says what it does in the console's words (these had only the server's English summary).
    expect(await create.textContent()).toContain('Stellwerk subscribes to nodes of an OPC UA server');
    expect(await create.textContent()).toContain('Stellwerk connects to a WebSocket server');
    await create.getByLabel('MQTT broker').check();
    await create.getByLabel('Title').fill('Site broker');
    await create.getByRole('button', { name: 'Create connector' }).click();
    const created = page.getByRole('dialog', { name: 'Connector created' });
    await created.getByRole('button', { name: 'I have stored them' }).click();
    // Closed, the dialog does not come back with a reload.
    await page.waitForURL(/#\/connectors$/);
    const row = page.getByTestId('connector-row').filter({ hasText: 'Site broker' });
    await row.waitFor();
    expect(await row.textContent()).toContain('MQTT broker');
    const footnote = await page.getByText('kinds of connectors').textContent();
    expect(footnote).toMatch(
      /^Stellwerk has \d+ kinds of connectors; “New connector” says what each one does\.$/,
    );
    expect(await page.locator('body').textContent()).not.toContain('docs/');

    // Its settings are edited in the console, not "through the API".
    await row.getByRole('button', { name: 'Edit Site broker' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit Site broker' });
    await edit.getByLabel('Max connections').waitFor();
    expect(await edit.textContent()).not.toContain('through the API');
    await edit.getByRole('button', { name: 'Cancel' }).click();

    await openOverview();
    await expect.poll(() => done('connector'), { timeout: 10_000 }).toBe('true');
    expect(await done('devices')).toBe('false');
    await h.shot('first-steps-02-connector-done');
  });

  it('names a connector by its kind in "New device", and marks the devices step done', async () => {
    const { page } = h;
    await steps().getByRole('link', { name: 'Add devices' }).click();
    await page.getByRole('button', { name: 'New device' }).click();
    const dialog = page.getByRole('dialog', { name: 'New device' });
    await expect
      .poll(() => dialog.getByLabel('Connector').locator('option:checked').textContent())
      .toBe('Site broker (MQTT broker)');
    await dialog.getByLabel('Device id').fill('boiler-1');
    await dialog.getByLabel('Title', { exact: true }).fill('Boiler 1');
    await dialog.getByRole('button', { name: 'Create device' }).click();
    await expect.poll(() => page.getByTestId('device-title').textContent()).toBe('Boiler 1');

    await openOverview();
    await expect.poll(() => done('devices'), { timeout: 10_000 }).toBe('true');
    expect(await done('connector')).toBe('true');
    expect(await done('twin')).toBe('false');
  });

  it('is gone once the site has devices and twins', async () => {
    const { page } = h;
    await xapi('POST', '/xapi/v1/digital-twins', { title: 'Boiler house' });
    await page.getByRole('button', { name: 'Refresh' }).click();
    await expect.poll(() => steps().count(), { timeout: 10_000 }).toBe(0);
    await page.reload();
    await page.getByTestId('devices-total').waitFor();
    expect(await steps().count()).toBe(0);
  });

  it('links a user only to the steps their roles allow', async () => {
    const { page } = h;
    await page.getByRole('button', { name: 'Log out' }).click();
    await signIn(page, h.server.baseUrl, VIEWER.email, VIEWER.password);
    const panel = steps();
    await panel.getByRole('heading', { name: 'First steps' }).waitFor();
    const links = await panel.getByRole('link').allTextContents();
    expect(links.map((l) => l.trim())).toEqual(['Create a twin', 'Dashboards']);
    for (const step of ['connector', 'devices'])
      expect(await page.getByTestId(`first-step-${step}`).textContent()).toContain(
        'Your roles do not allow this step; ask an administrator.',
      );
    // Connectors are not theirs to read: the step is not marked either way.
    expect(await done('connector')).toBeNull();
    expect(await done('devices')).toBe('false');
    await expectAccessible('first steps of a restricted user');

    // Hidden by the user, it stays hidden for them in this browser.
    await panel.getByRole('button', { name: 'Hide first steps' }).click();
    await expect.poll(() => steps().count()).toBe(0);
    await page.reload();
    await page.getByTestId('devices-total').waitFor();
    expect(await steps().count()).toBe(0);
    expect(h.foreignRequests).toEqual([]);
  });
});
