import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seriousViolations } from './support/axe-check.js';
import { startConsoleHarness, type ConsoleHarness } from './support/console-harness.js';
import { loginXapi, signIn, type Xapi } from './support/seed.js';

const ADMIN = { email: 'margaret@stellwerk.test', password: 'apollo guidance 1969' };
const INVITEE_PASSWORD = 'a password of my own';

/**
 * An invited user in Chromium: the link the server hands out (logged here, as without SMTP) opens a
 * page where they choose their password, then the login with their e-mail prefilled; the address
 * keeps neither the token nor the invitation path. A spent link says so and what to do; someone
 * signed in on the same browser is told that setting the password logs them out first.
 */
let h: ConsoleHarness;
let xapi: Xapi;
let roleId: string;

/** Invites a user through the XAPI and returns the link the server logged for them. */
async function invite(email: string, name: string): Promise<string> {
  await xapi('POST', '/xapi/v1/users', { email, name, roleIds: [roleId] });
  let link: string | undefined;
  await expect
    .poll(() => {
      const line = h.server
        .output()
        .split('\n')
        .find((l) => l.includes('invitation link not mailed') && l.includes(email));
      link = line ? (JSON.parse(line) as { link: string }).link : undefined;
      return link;
    })
    .toMatch(/\/invitation\?token=/);
  return link!;
}

describe('accepting an invitation (Chromium)', () => {
  beforeAll(async () => {
    h = await startConsoleHarness({
      STELLWERK_ADMIN_EMAIL: ADMIN.email,
      STELLWERK_ADMIN_PASSWORD: ADMIN.password,
    });
    xapi = await loginXapi(h.server.baseUrl, ADMIN.email, ADMIN.password);
    ({ id: roleId } = await xapi('POST', '/xapi/v1/roles', {
      name: 'Twin viewer',
      permissions: ['digitalTwin.read'],
    }));
  }, 180_000);

  afterAll(async () => {
    await h?.close();
  });

  it('lets the invited user choose a password and log in with it', async () => {
    const { page } = h;
    const link = await invite('olga@stellwerk.test', 'Olga Operator');
    await page.goto(link);
    await page.getByRole('heading', { name: 'Set your password' }).waitFor();
    await expect
      .poll(() => page.getByTestId('invitation-email').textContent())
      .toBe('You were invited as olga@stellwerk.test.');
    expect(await seriousViolations(page)).toEqual([]);
    await h.shot('invitation-01-set-password');

    await page.getByLabel('Password', { exact: true }).fill(INVITEE_PASSWORD);
    await page.getByLabel('Repeat password').fill(`${INVITEE_PASSWORD}!`);
    await page.getByText('The passwords differ.').waitFor();
    await page.getByLabel('Repeat password').fill(INVITEE_PASSWORD);
    await page.getByRole('button', { name: 'Set password' }).click();

    await page.getByRole('heading', { name: 'Log in' }).waitFor();
    await page.getByText('Your password is set. Log in now.').waitFor();
    expect(await page.getByLabel('E-mail').inputValue()).toBe('olga@stellwerk.test');
    const address = new URL(page.url());
    expect(address.pathname).toBe('/');
    expect(address.search).toBe('');
    await page.getByLabel('Password').fill(INVITEE_PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(() => page.getByTestId('greeting').textContent()).toContain('Olga Operator');

    // The link works once: opened again it says so before anything is typed, names no address, says
    // what to do, and leads back to the console.
    await page.goto(link);
    await page.getByText('The invitation is invalid or has expired.').waitFor();
    expect(await page.getByTestId('invitation-email').count()).toBe(0);
    await page.getByTestId('invitation-spent').getByText('Ask your administrator').waitFor();
    expect(await page.getByRole('button', { name: 'Set password' }).isDisabled()).toBe(true);
    await page.getByRole('link', { name: 'Not now: open the console' }).click();
    await expect.poll(() => page.getByTestId('greeting').textContent()).toContain('Olga Operator');
    expect(new URL(page.url()).pathname).toBe('/');

    // The spent link changed nothing: the chosen password still works.
    const olga = await loginXapi(h.server.baseUrl, 'olga@stellwerk.test', INVITEE_PASSWORD);
    expect(await olga<{ email: string }>('GET', '/xapi/v1/users/me')).toMatchObject({
      email: 'olga@stellwerk.test',
    });
  });

  it('tells someone signed in on this browser that the new password logs them out first', async () => {
    const { page } = h;
    await h.context.clearCookies();
    await signIn(page, h.server.baseUrl, ADMIN.email, ADMIN.password);
    const link = await invite('piet@stellwerk.test', 'Piet Planner');
    await page.goto(link);
    await page.getByRole('heading', { name: 'Set your password' }).waitFor();
    expect(await page.getByTestId('invitation-signed-in').textContent()).toContain(
      `You are logged in as ${ADMIN.email} in this browser`,
    );
    // The invited address, not the signed-in one, is the account the password is for.
    await expect
      .poll(() => page.getByTestId('invitation-email').textContent())
      .toBe('You were invited as piet@stellwerk.test.');
    await page.getByLabel('Password', { exact: true }).fill(INVITEE_PASSWORD);
    await page.getByLabel('Repeat password').fill(INVITEE_PASSWORD);
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByRole('heading', { name: 'Log in' }).waitFor();
    expect(await page.getByLabel('E-mail').inputValue()).toBe('piet@stellwerk.test');
    await page.getByLabel('Password').fill(INVITEE_PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(() => page.getByTestId('greeting').textContent()).toContain('Piet Planner');
  });
});
