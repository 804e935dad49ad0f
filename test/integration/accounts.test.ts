import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, caller, expectStatus, login, type ListBody } from './support/identity.js';
import { createTestApp, type TestApp } from './support/test-app.js';

interface AccountBody {
  id: string;
  parentId: string | null;
  hierarchyLevel: number;
  title: string;
  retentionMonths: number;
  timeZone: string;
  mandatoryTwoFactor: boolean;
  uiSettings: Record<string, unknown>;
  effectiveUiSettings?: Record<string, unknown>;
  modules: Record<string, unknown>;
  metaInfo: Record<string, unknown>;
  oauthConfig: Record<string, unknown> | null;
}

interface AnnouncementBody {
  id: string;
  accountId: string;
  inherited?: boolean;
  dismissed?: boolean;
}

let t: TestApp;
let admin: ReturnType<typeof caller>;

beforeAll(async () => {
  t = await createTestApp();
  admin = caller(t, bearer(await login(t)));
});
afterAll(() => t.close());

const createAccount = async (body: Record<string, unknown>) =>
  expectStatus<AccountBody>(await admin('POST', '/xapi/v1/accounts', body), 201);

describe('accounts', () => {
  it('creates a sub-account with a decimal-comma retention and reports its hierarchy level', async () => {
    const created = await createAccount({ title: 'Plant North', retentionMonths: '12,5' });
    expect(created.retentionMonths).toBe(12.5);
    expect(created.parentId).toBe(t.rootAccountId);
    const grandchild = await createAccount({ title: 'Hall 1', parentId: created.id });
    const one = expectStatus<AccountBody>(await admin('GET', `/xapi/v1/accounts/${grandchild.id}`), 200);
    expect(one.hierarchyLevel).toBe(2);
    expect(one.retentionMonths).toBe(24);
  });

  it('refuses retention values that are not a positive number of months', async () => {
    for (const retentionMonths of ['12,5,1', 'twelve', 0, -3, '1e3']) {
      const response = await admin('POST', '/xapi/v1/accounts', { title: 'x', retentionMonths });
      expect(response.statusCode, String(retentionMonths)).toBe(400);
      expect(response.json<{ error: { code: string } }>().error.code).toBe('VALIDATION_ERROR');
    }
  });

  it('keeps a time zone for calendar periods: UTC by default, canonical IANA names, others refused', async () => {
    const plain = await createAccount({ title: 'Zoneless' });
    expect(plain.timeZone).toBe('UTC');
    const berlin = await createAccount({ title: 'Berlin plant', timeZone: 'europe/berlin' });
    expect(berlin.timeZone).toBe('Europe/Berlin');
    const moved = expectStatus<AccountBody>(
      await admin('PUT', `/xapi/v1/accounts/${berlin.id}`, { timeZone: 'America/New_York' }),
      200,
    );
    expect(moved.timeZone).toBe('America/New_York');
    for (const timeZone of ['Mars/Olympus', 'UTC+25', '']) {
      const response = await admin('POST', '/xapi/v1/accounts', { title: 'x', timeZone });
      expect(response.statusCode, timeZone).toBe(400);
      expect(response.json<{ error: { code: string } }>().error.code).toBe('VALIDATION_ERROR');
    }
  });

  it('finds accounts by id and by title, case-insensitively', async () => {
    const account = await createAccount({ title: 'Waterworks Süd' });
    const byTitle = expectStatus<ListBody<AccountBody>>(
      await admin('GET', '/xapi/v1/accounts?searchItems=waterWORKS'),
      200,
    );
    expect(byTitle.data.map((a) => a.id)).toEqual([account.id]);
    const byId = expectStatus<ListBody<AccountBody>>(
      await admin('GET', `/xapi/v1/accounts?searchItems=${account.id}`),
      200,
    );
    expect(byId.data.map((a) => a.id)).toEqual([account.id]);
  });

  it('passes theme, colour theme and system fonts down to sub-accounts unless they set their own', async () => {
    const parent = await createAccount({
      title: 'Themed',
      uiSettings: { colorTheme: 'teal', systemFonts: true, systemUiTheme: 'dark' },
    });
    const child = await createAccount({ title: 'Themed child', parentId: parent.id, uiSettings: {} });
    const grandchild = await createAccount({
      title: 'Themed grandchild',
      parentId: child.id,
      uiSettings: { systemUiTheme: 'light', systemFonts: false },
    });
    const own = await createAccount({
      title: 'Own theme',
      parentId: parent.id,
      uiSettings: { colorTheme: 'amber' },
    });
    const inherited = expectStatus<AccountBody>(await admin('GET', `/xapi/v1/accounts/${child.id}`), 200);
    expect(inherited.uiSettings).toEqual({});
    expect(inherited.effectiveUiSettings).toEqual({
      systemUiTheme: 'dark',
      colorTheme: 'teal',
      systemFonts: true,
    });
    // An explicit false is a setting of its own, not "unset".
    const deeper = expectStatus<AccountBody>(await admin('GET', `/xapi/v1/accounts/${grandchild.id}`), 200);
    expect(deeper.effectiveUiSettings).toEqual({
      systemUiTheme: 'light',
      colorTheme: 'teal',
      systemFonts: false,
    });
    const kept = expectStatus<AccountBody>(await admin('GET', `/xapi/v1/accounts/${own.id}`), 200);
    expect(kept.effectiveUiSettings).toMatchObject({ colorTheme: 'amber', systemUiTheme: 'dark' });

    // A user of the sub-account gets the same effective settings with their session, but cannot
    // read or change the parent's settings, nor see a sibling's.
    const reader = await t.withContext(async () => t.services.roles.builtIn('AccountReader'));
    const email = `themed-user-${Date.now()}@stellwerk.test`;
    await t.withContext(() =>
      t.services.users.create({
        accountId: child.id,
        email,
        password: 'themed user password',
        roleIds: [reader!.id],
      }),
    );
    const childUser = caller(t, bearer(await login(t, email, 'themed user password')));
    const me = expectStatus<{ uiSettings: Record<string, unknown> }>(
      await childUser('GET', '/api/v1/user'),
      200,
    );
    expect(me.uiSettings).toEqual(inherited.effectiveUiSettings);
    expect((await childUser('GET', `/xapi/v1/accounts/${parent.id}`)).statusCode).toBe(404);
    expect((await childUser('GET', `/xapi/v1/accounts/${own.id}`)).statusCode).toBe(404);
    const write = await childUser('PUT', `/xapi/v1/accounts/${parent.id}`, { uiSettings: {} });
    expect([403, 404]).toContain(write.statusCode);

    for (const uiSettings of [
      { systemFonts: 'yes' },
      { systemUiTheme: 'dusk' },
      { colorTheme: 'x'.repeat(51) },
    ]) {
      const response = await admin('PUT', `/xapi/v1/accounts/${child.id}`, { uiSettings });
      expect(response.statusCode, JSON.stringify(uiSettings)).toBe(400);
      expect(response.json<{ error: { code: string } }>().error.code).toBe('VALIDATION_ERROR');
    }
  });

  it('keeps meta info as given and replaces it as a whole', async () => {
    const account = await createAccount({ title: 'Meta', metaInfo: { site: 'Nord', operator: 'Team A' } });
    expect(account.metaInfo).toEqual({ site: 'Nord', operator: 'Team A' });
    const changed = expectStatus<AccountBody>(
      await admin('PUT', `/xapi/v1/accounts/${account.id}`, { metaInfo: { site: 'Süd' } }),
      200,
    );
    expect(changed.metaInfo).toEqual({ site: 'Süd' });
    const tooMany = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, 'v']));
    const response = await admin('PUT', `/xapi/v1/accounts/${account.id}`, { metaInfo: tooMany });
    expect(response.statusCode).toBe(400);
  });

  it('keeps a map basemap URL (http(s) or a path on this server), inherited by sub-accounts', async () => {
    const parent = await createAccount({
      title: 'Mapped',
      uiSettings: { mapStyleUrl: '  https://tiles.example.com/style.json ' },
    });
    expect(parent.uiSettings).toEqual({ mapStyleUrl: 'https://tiles.example.com/style.json' });
    const child = await createAccount({ title: 'Mapped child', parentId: parent.id });
    const inherited = expectStatus<AccountBody>(await admin('GET', `/xapi/v1/accounts/${child.id}`), 200);
    expect(inherited.effectiveUiSettings?.mapStyleUrl).toBe('https://tiles.example.com/style.json');

    const own = expectStatus<AccountBody>(
      await admin('PUT', `/xapi/v1/accounts/${child.id}`, {
        uiSettings: { systemUiTheme: 'dark', mapStyleUrl: '/maps/site.pmtiles' },
      }),
      200,
    );
    expect(own.effectiveUiSettings?.mapStyleUrl).toBe('/maps/site.pmtiles');
    const cleared = expectStatus<AccountBody>(
      await admin('PUT', `/xapi/v1/accounts/${parent.id}`, { uiSettings: { mapStyleUrl: '' } }),
      200,
    );
    expect(cleared.uiSettings).toEqual({});

    for (const mapStyleUrl of ['javascript:alert(1)', '//evil.example/style.json', 'tiles/style.json']) {
      const response = await admin('PUT', `/xapi/v1/accounts/${parent.id}`, { uiSettings: { mapStyleUrl } });
      expect(response.statusCode, mapStyleUrl).toBe(400);
      expect(response.json<{ error: { details: Array<{ path: string }> } }>().error.details[0]?.path).toBe(
        '/uiSettings/mapStyleUrl',
      );
    }
  });

  it('stores modules, meta info and the mandatory-2FA flag through PUT', async () => {
    const account = await createAccount({ title: 'Settings' });
    const updated = expectStatus<AccountBody>(
      await admin('PUT', `/xapi/v1/accounts/${account.id}`, {
        modules: { integrations: { kafka: true }, dashboards: false },
        metaInfo: { site: 'Nord', contact: 'ops@example.test' },
        mandatoryTwoFactor: true,
      }),
      200,
    );
    expect(updated.modules).toEqual({ integrations: { kafka: true }, dashboards: false });
    expect(updated.metaInfo).toEqual({ site: 'Nord', contact: 'ops@example.test' });
    expect(updated.mandatoryTwoFactor).toBe(true);
    expect(updated.title).toBe('Settings');
  });

  it('accepts an OAuth configuration only with the callback on the public URL, and never returns the secret', async () => {
    const account = await createAccount({ title: 'Federated' });
    const oauthConfig = {
      scope: 'openid email',
      auth_uri: 'https://idp.example.test/authorize',
      client_id: 'stellwerk',
      token_uri: 'https://idp.example.test/token',
      redirect_uri: 'https://elsewhere.example.test/api/v1/oauth2/callback',
      client_secret: 's3cret-value',
      user_info_uri: 'https://idp.example.test/userinfo',
    };
    const wrong = await admin('PUT', `/xapi/v1/accounts/${account.id}`, { oauthConfig });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.body).toContain(`${t.config.publicUrl}/api/v1/oauth2/callback`);

    const redirect_uri = `${t.config.publicUrl}/api/v1/oauth2/callback`;
    const saved = expectStatus<AccountBody>(
      await admin('PUT', `/xapi/v1/accounts/${account.id}`, {
        oauthConfig: { ...oauthConfig, redirect_uri },
      }),
      200,
    );
    expect(saved.oauthConfig).toMatchObject({
      client_id: 'stellwerk',
      redirect_uri,
      client_secret: '********',
    });
    expect(JSON.stringify(saved)).not.toContain('s3cret-value');

    // Sending the masked value back (a read-modify-write client) keeps the stored secret.
    expectStatus(
      await admin('PUT', `/xapi/v1/accounts/${account.id}`, { oauthConfig: saved.oauthConfig }),
      200,
    );
    const stored = await t.withContext(async () =>
      t.services.accounts.oauthClientSecret((await t.services.accounts.findById(account.id))!),
    );
    expect(stored).toBe('s3cret-value');
  });

  it('blocks deleting an account that has sub-accounts, naming them', async () => {
    const parent = await createAccount({ title: 'Has children' });
    const child = await createAccount({ title: 'Blocking child', parentId: parent.id });
    const blocked = await admin('DELETE', `/xapi/v1/accounts/${parent.id}`);
    expect(blocked.statusCode).toBe(409);
    const error = blocked.json<{ error: { code: string; details: Array<{ id: string }> } }>().error;
    expect(error.code).toBe('DELETE_BLOCKED');
    expect(error.details.map((d) => d.id)).toEqual([child.id]);
    expect((await admin('DELETE', `/xapi/v1/accounts/${child.id}`)).statusCode).toBe(204);
    expect((await admin('DELETE', `/xapi/v1/accounts/${parent.id}`)).statusCode).toBe(204);
  });

  it('answers an unauthenticated call with 401 INVALID_TOKEN in the error body', async () => {
    const response = await t.app.inject({ url: '/xapi/v1/accounts' });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual({
      error: { code: 'INVALID_TOKEN', message: expect.any(String) as string, details: [] },
    });
  });
});

describe('announcements', () => {
  it('reach users of sub-accounts, who can dismiss an inherited one (never ANNOUNCEMENT_NOT_FOUND)', async () => {
    const plant = await createAccount({ title: 'Announcing plant' });
    const hall = await createAccount({ title: 'Hall', parentId: plant.id });
    const notice = expectStatus<AnnouncementBody>(
      await admin('POST', `/xapi/v1/accounts/${plant.id}/announcements`, {
        title: 'Maintenance',
        message: 'Broker restart on Sunday',
        severity: 'warning',
      }),
      201,
    );
    const reader = await t.withContext(async () => t.services.roles.builtIn('AccountReader'));
    const email = `hall-user-${Date.now()}@stellwerk.test`;
    await t.withContext(() =>
      t.services.users.create({
        accountId: hall.id,
        email,
        password: 'hall user password',
        roleIds: [reader!.id],
      }),
    );
    const hallUser = caller(t, bearer(await login(t, email, 'hall user password')));

    const feed = expectStatus<{ data: AnnouncementBody[] }>(
      await hallUser('GET', '/xapi/v1/announcements'),
      200,
    );
    expect(feed.data).toContainEqual(
      expect.objectContaining({ id: notice.id, inherited: true, dismissed: false }),
    );

    const dismissed = expectStatus<AnnouncementBody>(
      await hallUser('PUT', `/xapi/v1/announcements/${notice.id}/state`, { dismissed: true }),
      200,
    );
    expect(dismissed).toMatchObject({ id: notice.id, inherited: true, dismissed: true });
    const after = expectStatus<{ data: AnnouncementBody[] }>(
      await hallUser('GET', '/xapi/v1/announcements'),
      200,
    );
    expect(after.data.find((a) => a.id === notice.id)?.dismissed).toBe(true);

    // Announcements flow down only: the root account's admin does not get the plant's.
    const rootFeed = expectStatus<{ data: AnnouncementBody[] }>(
      await admin('GET', '/xapi/v1/announcements'),
      200,
    );
    expect(rootFeed.data.find((a) => a.id === notice.id)).toBeUndefined();
    const plantList = expectStatus<{ data: AnnouncementBody[] }>(
      await admin('GET', `/xapi/v1/accounts/${plant.id}/announcements`),
      200,
    );
    expect(plantList.data.map((a) => a.id)).toEqual([notice.id]);
  });
});
