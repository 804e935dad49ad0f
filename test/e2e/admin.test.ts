import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsoleHarness, type ConsoleHarness } from './support/console-harness.js';
import { apiToken, signIn } from './support/seed.js';

const EMAIL = 'ada@stellwerk.test';
const PASSWORD = 'analytical engine 1843';

/**
 * The administration pages in Chromium: a sub-account's retention and mandatory 2FA changed in the
 * console and read back through the XAPI; an API key whose once-shown secret works against the XAPI
 * and is gone after the dialog closes; a role, an invited user holding it and the role's blocked
 * deletion; an announcement as a banner; the account's theme followed by the console.
 */
let h: ConsoleHarness;
let token: string;

async function xapi<T>(
  method: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: T }> {
  const response = await fetch(`${h.server.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...headers },
  });
  return { status: response.status, body: (await response.json().catch(() => null)) as T };
}

const nav = (page: Page, name: string) =>
  page.getByRole('navigation', { name: 'Main navigation' }).getByRole('link', { name }).click();

describe('console administration end to end (Chromium)', () => {
  beforeAll(async () => {
    h = await startConsoleHarness({ STELLWERK_ADMIN_EMAIL: EMAIL, STELLWERK_ADMIN_PASSWORD: PASSWORD });
    token = await apiToken(h.server.baseUrl, EMAIL, PASSWORD);
  }, 180_000);

  afterAll(async () => {
    await h?.close();
  });

  it('creates a sub-account and changes its retention and mandatory 2FA', async () => {
    const { page } = h;
    await signIn(page, h.server.baseUrl, EMAIL, PASSWORD);

    await nav(page, 'Accounts');
    await page.getByRole('heading', { name: 'Accounts', level: 1 }).waitFor();
    await page.getByTestId('account-node').first().waitFor();
    await page.getByRole('button', { name: 'New sub-account', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Create a sub-account' });
    await dialog.getByLabel('Title').fill('Plant North');
    await h.shot('admin-01-account-create');
    await dialog.getByRole('button', { name: 'Create' }).click();

    await page.getByTestId('account-heading').filter({ hasText: 'Plant North' }).waitFor();
    const accountId = page.url().split('/accounts/')[1]!;
    const security = page.getByTestId('account-security');
    expect(await security.getByLabel('Retention (months)').inputValue()).toBe('24');
    await security.getByLabel('Retention (months)').fill('12,5');
    await security.getByLabel(/Require two-factor authentication/).check();
    await security.getByRole('button', { name: 'Save' }).click();
    await security.getByText('Saved.').waitFor();
    await h.shot('admin-02-account-settings');

    const stored = await xapi<{ retentionMonths: number; mandatoryTwoFactor: boolean; parentId: string }>(
      'GET',
      `/xapi/v1/accounts/${accountId}`,
    );
    expect(stored.status).toBe(200);
    expect(stored.body).toMatchObject({ retentionMonths: 12.5, mandatoryTwoFactor: true });

    // A bad value shows the server's message and stores nothing.
    await security.getByLabel('Retention (months)').fill('twelve');
    await security.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => security.getByTestId('error').textContent()).toContain('retentionMonths must be');
    expect(
      (await xapi<{ retentionMonths: number }>('GET', `/xapi/v1/accounts/${accountId}`)).body.retentionMonths,
    ).toBe(12.5);

    // The refused value is still unsaved in the form: leaving asks first, and the test leaves.
    const leaving = new Promise<string>((resolve) =>
      page.once('dialog', (dialog) => {
        resolve(dialog.message());
        void dialog.accept();
      }),
    );
    // The parent cannot be deleted while it has the sub-account: the 409's message is shown.
    await nav(page, 'Accounts');
    expect(await leaving).toContain('unsaved changes');
    const tree = page.getByTestId('account-tree');
    await tree.getByRole('link', { name: 'Plant North' }).waitFor();
    await page.getByRole('button', { name: 'New sub-account of Plant North' }).click();
    await page.getByRole('dialog', { name: 'Create a sub-account' }).getByLabel('Title').fill('Hall 7');
    await page
      .getByRole('dialog', { name: 'Create a sub-account' })
      .getByRole('button', { name: 'Create' })
      .click();
    await page.getByTestId('account-heading').filter({ hasText: 'Hall 7' }).waitFor();
    await nav(page, 'Accounts');
    await tree.getByRole('link', { name: 'Hall 7' }).waitFor();
    await h.shot('admin-03a-account-tree');
    await tree.getByRole('button', { name: 'Delete Plant North' }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete Plant North?' });
    await confirm.getByRole('button', { name: 'Delete' }).click();
    await confirm.getByText('It cannot be deleted while it is still in use.').waitFor();
    expect(await confirm.getByTestId('delete-blockers').textContent()).toContain('Hall 7');
    await h.shot('admin-03-account-delete-blocked');
    await confirm.getByRole('button', { name: 'Cancel' }).click();
  });

  it('creates an API key whose secret works once shown and is never shown again', async () => {
    const { page } = h;
    await nav(page, 'Users and access');
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByTestId('api-keys-table').waitFor();
    await page.getByRole('button', { name: 'New API key' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create an API key' });
    await dialog.getByLabel('Title', { exact: true }).fill('Historian export');
    await dialog.getByLabel('Digital twins: Read').check();
    await expect.poll(() => dialog.getByText('1 selected').count()).toBe(1);
    await h.shot('admin-04-api-key-create');
    await dialog.getByRole('button', { name: 'Create' }).click();

    const created = page.getByRole('dialog', { name: 'API key created' });
    await created.getByText('Copy the key now.').waitFor();
    expect(await created.getByRole('button', { name: 'Copy key' }).count()).toBe(1);
    const key = (await created.getByTestId('api-key-secret').textContent())!.trim();
    expect(key.length).toBeGreaterThanOrEqual(32);
    await h.shot('admin-05-api-key-secret');

    const twins = await fetch(`${h.server.baseUrl}/xapi/v1/digital-twins`, { headers: { 'x-api-key': key } });
    expect(twins.status).toBe(200);
    const users = await fetch(`${h.server.baseUrl}/xapi/v1/users`, { headers: { 'x-api-key': key } });
    expect(users.status).toBe(403);

    await created.getByRole('button', { name: 'I have stored the key' }).click();
    const row = page.getByTestId('api-key-row').filter({ hasText: 'Historian export' });
    await row.waitFor();
    expect(key.startsWith((await row.getByTestId('api-key-prefix').textContent())!.replace('…', ''))).toBe(
      true,
    );
    await page.reload();
    await row.waitFor();
    expect(await page.content()).not.toContain(key);

    await row.getByRole('button', { name: /Revoke/ }).click();
    await page
      .getByRole('dialog', { name: 'Revoke Historian export?' })
      .getByRole('button', { name: 'Revoke' })
      .click();
    await expect.poll(() => page.getByTestId('api-key-row').count()).toBe(0);
    const revoked = await fetch(`${h.server.baseUrl}/xapi/v1/digital-twins`, {
      headers: { 'x-api-key': key },
    });
    expect(revoked.status).toBe(401);
  });

  it('creates a role, invites a user with it and cannot delete the role while the user holds it', async () => {
    const { page } = h;
    await page.getByRole('link', { name: 'Roles' }).click();
    await page.getByTestId('role-row').first().waitFor();
    // Counts agree with their number: the built-in administrator role holds one permission.
    const administrator = page
      .getByTestId('role-row')
      .filter({ has: page.locator('strong', { hasText: /^Administrator$/ }) });
    expect(await administrator.textContent()).toContain('Everything in the account');
    expect(await administrator.textContent()).toContain('1 permission');
    expect(await administrator.textContent()).not.toContain('1 permissions');
    // Built-in roles read in the console's language; the server keeps their English API names.
    expect(await page.getByTestId('role-row').filter({ hasText: 'Account reader' }).count()).toBe(1);
    await page.getByLabel('Language').selectOption('de');
    const reader = page.getByTestId('role-row').filter({ hasText: 'Liest alles, ändert nichts.' });
    await reader.waitFor();
    expect(await reader.locator('strong').textContent()).toBe('Leser');
    expect(await administrator.textContent()).toContain('1 Berechtigung');
    expect(await administrator.textContent()).not.toContain('1 Berechtigungen');
    await page.getByLabel('Sprache').selectOption('en');
    await page.getByRole('button', { name: 'New role' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create a role' });
    await dialog.getByLabel('Name').fill('Site operator');
    await dialog.getByLabel('Digital twins: Manage').check();
    await dialog.getByLabel('Dashboards: Read').check();
    await h.shot('admin-06-role-create');
    await dialog.getByRole('button', { name: 'Create' }).click();
    const roleRow = page.getByTestId('role-row').filter({ hasText: 'Site operator' });
    await roleRow.waitFor();
    const roles = await xapi<{ data: Array<{ id: string; permissions: string[] }> }>(
      'GET',
      '/xapi/v1/roles?searchItems=Site%20operator',
    );
    expect(roles.body.data).toHaveLength(1);
    expect(roles.body.data[0]!.permissions.sort()).toEqual(['dashboard.read', 'digitalTwin.manage']);

    await page.getByRole('link', { name: 'Users', exact: true }).click();
    await page.getByTestId('user-row').first().waitFor();
    await page.getByRole('button', { name: 'Invite user' }).click();
    const invite = page.getByRole('dialog', { name: 'Invite a user' });
    await invite.getByLabel('E-mail').fill('operator@stellwerk.test');
    await invite.getByLabel('Name (optional)').fill('Olga Operator');
    await invite.getByLabel('Site operator').check();
    await invite.getByRole('button', { name: 'Invite user' }).click();
    await invite.getByTestId('invite-result').getByText('operator@stellwerk.test').waitFor();
    expect(await invite.getByTestId('invite-result').textContent()).toContain('server log');
    // Without a mail server the admin gets the one-time link to hand over.
    const handedOver = await invite.getByTestId('invitation-link').inputValue();
    expect(handedOver).toMatch(new RegExp(`^${h.server.baseUrl}/invitation\\?token=[\\w-]+$`));
    expect(h.server.output()).toContain(handedOver);
    await h.shot('admin-07-user-invited');
    await invite.getByRole('button', { name: 'Close' }).click();
    const userRow = page.getByTestId('user-row').filter({ hasText: 'operator@stellwerk.test' });
    await userRow.getByText('Invitation pending').waitFor();

    const users = await xapi<{ data: Array<{ invitationPending: boolean; roles: Array<{ name: string }> }> }>(
      'GET',
      '/xapi/v1/users?searchItems=operator@stellwerk.test',
    );
    expect(users.body.data).toHaveLength(1);
    expect(users.body.data[0]).toMatchObject({ invitationPending: true, roles: [{ name: 'Site operator' }] });

    await page.getByRole('link', { name: 'Roles' }).click();
    await roleRow.getByRole('button', { name: /Delete/ }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete Site operator?' });
    await confirm.getByRole('button', { name: 'Delete' }).click();
    await confirm.getByText('It cannot be deleted while it is still in use.').waitFor();
    expect(await confirm.getByTestId('delete-blockers').textContent()).toContain('operator@stellwerk.test');
    await h.shot('admin-08-role-delete-blocked');
    await confirm.getByRole('button', { name: 'Cancel' }).click();
  });

  it('publishes an announcement that shows as a banner, and follows the account theme', async () => {
    const { page } = h;
    await nav(page, 'Accounts');
    const tree = page.getByTestId('account-tree');
    const root = (
      await xapi<{ data: Array<{ id: string; parentId: string | null }> }>('GET', '/xapi/v1/accounts')
    ).body.data.find((a) => a.parentId === null)!;
    await tree.locator(`a[href="#/accounts/${root.id}"]`).click();
    const panel = page.getByTestId('account-announcements');
    await panel.getByLabel('Title').fill('Maintenance tonight');
    await panel.getByLabel('Message').fill('The server restarts at 22:00.');
    await panel.getByLabel('Severity').selectOption('warning');
    await panel.getByRole('button', { name: 'Publish' }).click();
    const banner = page.getByTestId('announcement-banner');
    await banner.filter({ hasText: 'Maintenance tonight' }).waitFor();
    expect(await banner.textContent()).toContain('The server restarts at 22:00.');

    // The account's theme decides as long as the user has not chosen one with the toggle.
    expect(await page.evaluate(() => localStorage.getItem('stellwerk.theme'))).toBeNull();
    const appearance = page.getByTestId('account-appearance');
    await appearance.getByLabel('Dark').check();
    await appearance.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.locator('html').getAttribute('data-theme')).toBe('dark');
    await h.shot('admin-09-announcement-dark');

    await nav(page, 'Users and access');
    await banner.filter({ hasText: 'Maintenance tonight' }).waitFor();
    await h.shot('admin-10-users-dark');
    await page.getByRole('button', { name: 'Dismiss announcement Maintenance tonight' }).click();
    await expect.poll(() => banner.count()).toBe(0);
    await page.reload();
    await page.getByTestId('users-table').waitFor();
    expect(await banner.count()).toBe(0);
  });

  it('uses the account basemap setting on the map, falling back to the offline basemap when it cannot load', async () => {
    const { page } = h;
    await nav(page, 'Accounts');
    await page.getByTestId('account-tree').locator('a').first().click();
    const appearance = page.getByTestId('account-appearance');
    await appearance.getByLabel('Map basemap').fill('/maps/site.pmtiles');
    await appearance.getByText('raster tiles are shown as they are').waitFor();
    await appearance.getByLabel('Map basemap').fill('/maps/missing-style.json');
    await appearance.getByRole('button', { name: 'Save' }).click();
    await appearance.getByText('Saved.').waitFor();

    await nav(page, 'Map');
    await expect
      .poll(() => page.getByTestId('basemap-notice').textContent(), { timeout: 15_000 })
      .toContain('/maps/missing-style.json');
    const map = page.getByTestId('twin-map');
    await expect
      .poll(async () => Number(await map.getAttribute('data-rendered-countries')), { timeout: 15_000 })
      .toBeGreaterThan(50);
    await h.shot('admin-11-map-fallback');
    expect(h.foreignRequests).toEqual([]);
  });
});
