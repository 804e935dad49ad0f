import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsoleHarness, type ConsoleHarness } from './support/console-harness.js';
import { addRoutedState, loginXapi, seedMqttDevice, signIn, type Xapi } from './support/seed.js';

const ADMIN = { email: 'grace@stellwerk.test', password: 'read only pages 1952' };
const READER = { email: 'auditor@stellwerk.test', password: 'reads everything changes nothing' };

/**
 * A user holding the built-in reader role (`all.read`) in Chromium: every page of gateways, drivers,
 * templates, twins, rules, dashboards, flows, scripts and exports shows its content without a
 * button that creates, changes, runs or deletes anything; an administrator sees those buttons on
 * the same pages.
 */
let h: ConsoleHarness;
let xapi: Xapi;
const ids: {
  gateway?: string;
  twin?: string;
  account?: string;
  driver?: string;
  template?: string;
  rule?: string;
  dashboard?: string;
} = {};

// Buttons that write: create, import, edit, delete, rename, run, add, revoke, (de)activate,
// invite, copy a template (English console); "Copy" and "Copy ID" alone put text on the clipboard.
// No word boundary: a row button's hidden object name follows its text directly.
const WRITE_ACTION =
  /^\+?\s*(New|Create|Import|Edit|Delete|Rename|Run|Add|Revoke|Deactivate|Activate|Invite)|^Copy\s*(?!ID$)\S/;

/** The pages and a text each shows once its content has loaded. */
const pages = (): Array<[path: string, loaded: string]> => [
  ['/gateways', 'Hall gateway'],
  [`/gateways/${ids.gateway}`, 'Hall gateway'],
  ['/drivers', 'Boiler (JSON)'],
  ['/templates', 'Boiler template'],
  ['/twins', 'Boiler 1'],
  [`/twins/${ids.twin}`, 'Pressure'],
  ['/rules', 'Boiler pressure'],
  ['/dashboards', 'Boiler board'],
  [`/dashboards/${ids.dashboard}`, 'Boiler board'],
  ['/flows', 'Integration'],
  ['/flows/filters', 'Integration'],
  ['/exports', 'CSV export plans'],
  ['/accounts', 'Accounts'],
  ['/access', 'auditor@stellwerk.test'],
  ['/access/roles', 'Administrator'],
  ['/access/api-keys', 'Users and access'],
  ['/alarms/groups', 'Smart groups'],
  ['/alarms/reports', 'Alarm reports'],
];

/** Runs in the page (a string: the test's TypeScript has no DOM types): each button's name in main. */
const BUTTON_NAMES = `[...document.querySelectorAll('main button:not(:disabled)')].map(
  (b) => (b.getAttribute('aria-label') || b.textContent || '').trim())`;

async function writeButtons(path: string, loaded: string): Promise<string[]> {
  await h.page.goto(`${h.server.baseUrl}/#${path}`);
  await h.page.locator('main h1').first().waitFor();
  await h.page
    .locator('main')
    .getByText(loaded, { exact: true })
    .first()
    .waitFor({ timeout: 10_000 })
    .catch((error: unknown) => {
      throw new Error(`${path}: "${loaded}" did not appear`, { cause: error });
    });
  // Lists render their rows and row actions together; a short pause lets late details settle.
  await h.page.waitForTimeout(300);
  const names = await h.page.evaluate<string[]>(BUTTON_NAMES);
  // Column titles that sort (ending in an arrow) only reorder the list.
  return names.filter((name) => WRITE_ACTION.test(name) && !/[▲▼↕]$/.test(name));
}

async function logOut(): Promise<void> {
  await h.page.getByRole('button', { name: 'Log out' }).click();
  await h.page.getByLabel('E-mail').waitFor();
}

describe('a read-only role sees no write actions (Chromium)', () => {
  beforeAll(async () => {
    h = await startConsoleHarness({
      STELLWERK_ADMIN_EMAIL: ADMIN.email,
      STELLWERK_ADMIN_PASSWORD: ADMIN.password,
    });
    xapi = await loginXapi(h.server.baseUrl, ADMIN.email, ADMIN.password);
    const seeded = await seedMqttDevice(xapi, h.mqttPort, {
      connectorTitle: 'Boiler gateway',
      driver: { title: 'Boiler (JSON)', parser: { type: 'json' } },
      device: { device_id: 'boiler-1', title: 'Boiler 1 sensor' },
    });
    ids.gateway = (
      await xapi('POST', '/xapi/v1/gateways', { eui: '58A0CBFFFE800002', title: 'Hall gateway' })
    ).id;
    ids.driver = seeded.driverId;
    ids.template = (await xapi('POST', '/xapi/v1/device-templates', { title: 'Boiler template' })).id;
    ids.twin = (await xapi('POST', '/xapi/v1/digital-twins', { title: 'Boiler 1' })).id;
    await addRoutedState(xapi, ids.twin, {
      key: 'pressure',
      title: 'Pressure',
      valueType: 'number',
      unit: 'bar',
    });
    ids.rule = (
      await xapi('POST', '/xapi/v1/rules', {
        title: 'Boiler pressure',
        twinId: ids.twin,
        trigger: { type: 'event', conditions: [{ stateKey: 'pressure', operator: '>', value: 5 }] },
        commands: [{ type: 'alarm', severity: 'major', message: 'Boiler pressure high' }],
      })
    ).id;
    ids.dashboard = (await xapi('POST', '/xapi/v1/dashboards', { title: 'Boiler board' })).id;
    ids.account = (await xapi<{ data: Array<{ id: string }> }>('GET', '/xapi/v1/accounts')).data[0]!.id;
    const roles = await xapi<{ data: Array<{ id: string; name: string }> }>(
      'GET',
      '/xapi/v1/roles?searchItems=AccountReader',
    );
    const reader = roles.data.find((role) => role.name === 'AccountReader')!;
    await xapi('POST', '/xapi/v1/users', {
      email: READER.email,
      name: 'Auditor',
      password: READER.password,
      roleIds: [reader.id],
    });
  }, 180_000);

  afterAll(async () => {
    await h?.close();
  });

  it('shows a reader every page without a button that would change something', async () => {
    await signIn(h.page, h.server.baseUrl, READER.email, READER.password);
    const found: Record<string, string[]> = {};
    for (const [path, loaded] of pages()) {
      const buttons = await writeButtons(path, loaded);
      if (buttons.length > 0) found[path] = buttons;
    }
    expect(found).toEqual({});
    // The rule's activity switch is shown, but cannot be turned.
    await h.page.goto(`${h.server.baseUrl}/#/rules`);
    const toggle = h.page.getByRole('checkbox', { name: /Boiler pressure/ });
    await toggle.waitFor();
    expect(await toggle.isDisabled()).toBe(true);
    // An account's settings read, with every field and button disabled and a note why.
    await h.page.goto(`${h.server.baseUrl}/#/accounts/${ids.account}`);
    await h.page.getByTestId('read-only-notice').waitFor();
    expect(await writeButtons(`/accounts/${ids.account}`, 'General')).toEqual([]);
    const enabled = await h.page.locator('main input:not(:disabled), main button:not(:disabled)').count();
    expect(enabled).toBe(1); // the account id's copy button, outside the settings
    // Editors open read-only, naming the permission they need; nothing in them can be saved.
    for (const [path, permission] of [
      [`/drivers/${ids.driver}`, 'Device drivers: Manage'],
      [`/templates/${ids.template}`, 'Device templates: Manage'],
      [`/rules/${ids.rule}`, 'Rules: Manage'],
    ] as const) {
      await h.page.goto(`${h.server.baseUrl}/#${path}`);
      const notice = h.page.getByTestId('read-only-notice');
      await notice.waitFor();
      expect(await notice.textContent(), path).toContain(permission);
      expect(await h.page.locator('main button[type="submit"]:not(:disabled)').count(), path).toBe(0);
      expect(await h.page.locator('main fieldset:disabled input').count(), path).toBeGreaterThan(0);
    }
    await logOut();
  });

  it('shows an administrator the write buttons on the same pages', async () => {
    await signIn(h.page, h.server.baseUrl, ADMIN.email, ADMIN.password);
    const missing: string[] = [];
    for (const [path, loaded] of pages()) {
      if ((await writeButtons(path, loaded)).length === 0) missing.push(path);
    }
    expect(missing).toEqual([]);
    await logOut();
  });
});
