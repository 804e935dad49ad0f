import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createUser, errorCode, loginBody, setCookies } from './support/auth.js';
import { routeKey, sampleRequest } from './support/route-requests.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * Whom the API rate limit counts: the principal a credential resolves to, however the credential
 * is spelled or carried, and the client address for everything that resolves to no one. Varying
 * the header must never buy a fresh budget.
 */

const LIMIT = 6;
let t: TestApp;
let apiKey: string;
let hubKey: string;

beforeAll(async () => {
  // A long window: nothing recovers while a test runs.
  t = await createTestApp({
    env: { STELLWERK_RATE_LIMIT_MAX: String(LIMIT), STELLWERK_RATE_LIMIT_WINDOW_MS: '600000' },
  });
  for (const name of ['una', 'ulf', 'uli', 'uwe']) await createUser(t, `${name}@stellwerk.test`);
  const admin = await bearer(t, 'uwe@stellwerk.test', { ip: '10.20.0.1' });
  const created = await t.app.inject({
    method: 'POST',
    url: '/xapi/v1/api-keys',
    headers: { authorization: `Bearer ${admin}` },
    payload: { title: 'limited', permissions: ['all.read'] },
    remoteAddress: '10.20.0.1',
  });
  apiKey = created.json<{ key: string }>().key;
  const hub = await t.app.inject({
    method: 'POST',
    url: '/xapi/v1/api-keys',
    headers: { authorization: `Bearer ${admin}` },
    payload: { title: 'hub', permissions: ['IotHub.read'] },
    remoteAddress: '10.20.0.1',
  });
  hubKey = hub.json<{ key: string }>().key;
});
afterAll(() => t?.close());

/** Sends each request in turn (cycling) until `total` are sent; returns the statuses. */
async function statuses(requests: InjectOptions[], total: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < total; i++) out.push((await t.app.inject(requests[i % requests.length]!)).statusCode);
  return out;
}

const within = <T>(answers: T[]) => answers.slice(0, LIMIT);
const beyond = <T>(answers: T[]) => answers.slice(LIMIT);

function expectLimited(response: LightMyRequestResponse): void {
  expect(response.statusCode).toBe(429);
  expect(errorCode(response)).toBe('API_LIMIT_REACHED');
}

describe('API rate limit keys', () => {
  it('gives a user one budget across header spellings, sessions and the cookie', async () => {
    const ip = '10.21.0.1';
    const token = await bearer(t, 'una@stellwerk.test', { ip: '10.21.1.1' });
    const second = await bearer(t, 'una@stellwerk.test', { ip: '10.21.1.2' });
    const consoleLogin = await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      headers: { 'x-requested-with': 'test' },
      payload: loginBody('una@stellwerk.test'),
      remoteAddress: '10.21.1.3',
    });
    const cookie = setCookies(consoleLogin).find((c) => c.attributes.httponly && c.value)!;
    const spellings = [
      `Bearer ${token}`,
      `bearer ${token}`,
      `BEARER ${token}`,
      `Bearer   ${token}`,
      ` Bearer ${token} `,
      `Bearer ${second}`,
    ];
    const requests: InjectOptions[] = [
      ...spellings.map((authorization) => ({
        url: '/api/v1/user',
        headers: { authorization },
        remoteAddress: ip,
      })),
      { url: '/api/v1/user', headers: { cookie: `${cookie.name}=${cookie.value}` }, remoteAddress: ip },
    ];
    const answers = await statuses(requests, requests.length * 2);
    expect(within(answers)).toEqual(Array(LIMIT).fill(200));
    expect(beyond(answers)).toEqual(Array(answers.length - LIMIT).fill(429));
    // From another address too: the budget is the user's, not the address's.
    expectLimited(await t.app.inject({ ...requests[0]!, remoteAddress: '10.21.9.9' }));
  });

  it('gives an API key one budget however its header is spelled or what comes along with it', async () => {
    const ip = '10.22.0.1';
    const variants: Record<string, string | string[]>[] = [
      { 'x-api-key': apiKey },
      { 'x-api-key': ` ${apiKey} ` },
      { 'x-api-key': apiKey, authorization: 'Bearer junk-token' },
      { 'x-api-key': apiKey, authorization: `Bearer ${apiKey}` },
    ];
    const requests = variants.map((headers) => ({ url: '/xapi/v1/roles', headers, remoteAddress: ip }));
    const answers = await statuses(requests, requests.length * 2 + 2);
    expect(within(answers)).toEqual(Array(LIMIT).fill(200));
    expect(beyond(answers)).toEqual(Array(answers.length - LIMIT).fill(429));
  });

  it('counts requests that resolve to no one against the client address, whatever they carry', async () => {
    const ip = '10.23.0.1';
    let n = 0;
    const junk = (): Record<string, string> => {
      n++;
      const headers: Record<string, string>[] = [
        { authorization: `Bearer random-${n}` },
        { authorization: `bearer  random-${n}` },
        { authorization: `Basic random-${n}` },
        { 'x-api-key': `swk_random-${n}` },
        { 'x-api-key': apiKey.toUpperCase() },
        { 'x-api-key': [apiKey, apiKey] } as unknown as Record<string, string>,
        { authorization: `Bearer ${apiKey}` },
        {},
      ];
      return headers[n % headers.length]!;
    };
    const answers: (string | undefined)[] = [];
    for (let i = 0; i < LIMIT + 6; i++) {
      const response = await t.app.inject({ url: '/xapi/v1/roles', headers: junk(), remoteAddress: ip });
      answers.push(errorCode(response));
    }
    expect(within(answers)).toEqual(Array(LIMIT).fill('INVALID_TOKEN'));
    expect(beyond(answers)).toEqual(Array(6).fill('API_LIMIT_REACHED'));
    // The user behind a valid token from that same address keeps their own budget.
    const token = await bearer(t, 'ulf@stellwerk.test', { ip: '10.23.1.1' });
    const valid = await t.app.inject({
      url: '/xapi/v1/roles',
      headers: { authorization: `Bearer ${token}` },
      remoteAddress: ip,
    });
    expect(valid.statusCode).toBe(200);
  });

  it('keys public routes on the client address, ignoring any credential header', async () => {
    const ip = '10.24.0.1';
    const requests = Array.from({ length: LIMIT + 3 }, (_, i) => ({
      method: 'POST' as const,
      url: '/xapi/v1/auth/login',
      headers: i % 2 ? { authorization: `Bearer junk-${i}` } : { 'x-api-key': `junk-${i}` },
      payload: loginBody('nobody@stellwerk.test', { password: 'wrong password here' }),
      remoteAddress: ip,
    }));
    const answers = await statuses(requests, requests.length);
    expect(within(answers)).toEqual(Array(LIMIT).fill(401));
    expect(beyond(answers)).toEqual(Array(3).fill(429));
  });

  it('leaves no authenticated route a fresh budget for any spelling of a spent credential (route table)', async () => {
    const token = await bearer(t, 'uli@stellwerk.test', { ip: '10.26.1.1' });
    const spellings = {
      user: [`Bearer ${token}`, `bearer  ${token}`, ` BEARER ${token}`].map((authorization) => ({
        authorization,
      })),
      hub: [hubKey, ` ${hubKey}`, `${hubKey} `].map((key) => ({ 'x-api-key': key })),
    };
    await statuses([{ url: '/api/v1/user', headers: spellings.user[0]!, remoteAddress: '10.26.0.1' }], LIMIT);
    await statuses(
      [{ url: '/hub/api/v1/account', headers: spellings.hub[0]!, remoteAddress: '10.26.0.1' }],
      LIMIT,
    );
    const fresh: string[] = [];
    // Swagger UI's static files come from its plugin, with no route config and no credentials. Public
    // dashboards take no account credential: their budget is the address's per dashboard
    // (public-dashboards.test.ts).
    const routes = t.ctx.routes.filter(
      (r) => r.config.auth && r.config.auth !== 'public' && r.config.auth !== 'dashboardKey',
    );
    for (const [i, route] of routes.entries()) {
      const kind = route.config.auth === 'hub' ? 'hub' : 'user';
      const request = sampleRequest(route, { ...spellings[kind][i % 3]!, 'x-requested-with': 'test' });
      const response = await t.app.inject({ ...request, remoteAddress: `10.26.2.${i % 250}` });
      if (response.statusCode !== 429) fresh.push(`${routeKey(route)} → ${response.statusCode}`);
    }
    expect(routes.length).toBeGreaterThan(100);
    expect(fresh).toEqual([]);
  });

  it('treats the addresses of one IPv6 /64 and an IPv4-mapped address as one client', async () => {
    const requests = ['2001:db8:1:2::1', '2001:db8:1:2::2', '2001:db8:1:2:ffff::9'].map((remoteAddress) => ({
      url: '/api/v1/user',
      remoteAddress,
    }));
    const answers = await statuses(requests, LIMIT + 3);
    expect(beyond(answers)).toEqual(Array(3).fill(429));

    const v4 = await statuses([{ url: '/api/v1/user', remoteAddress: '10.25.0.1' }], LIMIT);
    expect(v4).toEqual(Array(LIMIT).fill(401));
    expectLimited(await t.app.inject({ url: '/api/v1/user', remoteAddress: '::ffff:10.25.0.1' }));
  });
});
