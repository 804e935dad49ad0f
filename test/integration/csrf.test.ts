import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, errorCode, loginBody, setCookies } from './support/auth.js';
import { routeKey, sampleRequest, STATE_CHANGING } from './support/route-requests.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * Generated from the route table: every state-changing route that the console cookie can
 * authenticate (whatever its prefix), and every route of the console API, refuses the cookie
 * without the CSRF proof and accepts it with the proof. Routes that ignore the cookie must answer
 * exactly as they do without it.
 */

let t: TestApp;
let session: string;
const EMAIL = 'csrf-walker@stellwerk.test';
const PROOF = { 'x-requested-with': 'stellwerk-console' };
/** Routes that may revoke or replace the walker's session. */
const ENDS_SESSION = /\/(logout|login|2fa)/;

async function consoleLogin(): Promise<string> {
  const response = await t.app.inject({
    method: 'POST',
    url: '/api/v1/auth/login',
    headers: PROOF,
    payload: loginBody(EMAIL),
  });
  const cookie = setCookies(response).find((c) => c.attributes.httponly && c.value);
  if (!cookie) throw new Error(`console login failed: ${response.statusCode} ${response.body}`);
  return `${cookie.name}=${cookie.value}`;
}

async function bearerToken(): Promise<string> {
  const response = await t.app.inject({
    method: 'POST',
    url: '/xapi/v1/auth/login',
    payload: loginBody(EMAIL),
  });
  return response.json<{ token: string }>().token;
}

const code = (response: LightMyRequestResponse) =>
  response.statusCode >= 400 ? errorCode(response) : undefined;
const answer = (response: LightMyRequestResponse) => `${response.statusCode} ${code(response) ?? ''}`;

beforeAll(async () => {
  t = await createTestApp();
  await createUser(t, EMAIL);
  session = await consoleLogin();
});
afterAll(() => t?.close());

describe('CSRF proof for cookie-authenticated requests (generated from the route table)', () => {
  it('refuses every state-changing cookie request without the proof and accepts it with the proof', async () => {
    const publicOrigin = new URL(t.config.publicUrl).origin;
    // Same site, other port: SameSite=Lax sends the cookie along from there.
    const sibling = new URL(t.config.publicUrl);
    sibling.port = String(Number(sibling.port || 80) + 1);
    const violations: string[] = [];
    const guarded: string[] = [];
    for (const route of t.ctx.routes.filter((r) => STATE_CHANGING.has(r.method))) {
      const key = routeKey(route);
      const acceptsCookie = route.config.auth !== 'public' && route.config.auth !== 'hub';
      // Calls that may revoke or replace the session get a fresh one each.
      const withCookie = async (headers: Record<string, string>) => {
        if (ENDS_SESSION.test(route.url)) session = await consoleLogin();
        return t.app.inject(sampleRequest(route, { cookie: session, ...headers }));
      };
      const forged = await withCookie({});
      if (!acceptsCookie && !route.url.startsWith('/api/')) {
        const bare = await t.app.inject(sampleRequest(route, {}));
        if (answer(forged) !== answer(bare))
          violations.push(`${key} acts on the cookie (${answer(forged)}, without: ${answer(bare)})`);
        continue;
      }
      guarded.push(key);
      const foreign = await withCookie({ origin: sibling.origin });
      for (const [what, response] of [
        ['no proof', forged],
        ['a same-site foreign Origin', foreign],
      ] as const) {
        if (code(response) !== 'CSRF_CHECK_FAILED')
          violations.push(`${key} with the cookie and ${what} → ${answer(response)}`);
      }
      for (const proof of [PROOF, { origin: publicOrigin }]) {
        const response = await withCookie(proof);
        if (code(response) === 'CSRF_CHECK_FAILED' || (acceptsCookie && code(response) === 'INVALID_TOKEN'))
          violations.push(`${key} with the cookie and ${Object.keys(proof)[0]} → ${answer(response)}`);
      }
    }
    expect(violations).toEqual([]);
    expect(guarded.filter((k) => k.includes(' /xapi/')).length).toBeGreaterThan(50);
    expect(guarded.filter((k) => k.includes(' /api/')).length).toBeGreaterThan(3);
  }, 300_000);
});

describe('the credential that decides', () => {
  const forge = (headers: Record<string, string>) =>
    t.app.inject({
      method: 'POST',
      url: '/xapi/v1/accounts',
      headers: { cookie: session, ...headers },
      payload: { title: 'Forged' },
    });

  it('is the cookie when no bearer token or API key is there to replace it', async () => {
    const alongside: Record<string, string>[] = [
      { authorization: 'Basic Zm9vOmJhcg==' },
      { authorization: 'Bearer' },
      { 'x-api-key': ' ' },
    ];
    for (const headers of alongside) {
      expect(errorCode(await forge(headers)), JSON.stringify(headers)).toBe('CSRF_CHECK_FAILED');
    }
  });

  it('is the bearer token when one comes along, which needs no proof', async () => {
    expect((await forge({ authorization: `Bearer ${await bearerToken()}` })).statusCode).toBe(201);
  });
});

describe('bodies a cross-site form or no-cors fetch can send', () => {
  const post = (url: string, contentType: string, payload: string, headers: Record<string, string>) =>
    t.app.inject({
      method: 'POST',
      url,
      headers: { ...headers, ...(contentType ? { 'content-type': contentType } : {}) },
      payload,
    });

  it('are refused on JSON routes with 415 UNSUPPORTED_MEDIA_TYPE, whoever sends them', async () => {
    const bearer = { authorization: `Bearer ${await bearerToken()}` };
    for (const headers of [bearer, { cookie: session, ...PROOF }]) {
      for (const [type, body] of [
        // A no-cors fetch of a Blob without a type sends no Content-Type at all.
        ['', '{"title":"Untyped"}'],
        ['text/plain', '{"title":"Plain"}'],
        ['text/plain;charset=UTF-8', '{"title":"Plain"}'],
        ['application/x-www-form-urlencoded', 'title=Form'],
        [
          'multipart/form-data; boundary=x',
          '--x\r\nContent-Disposition: form-data; name="title"\r\n\r\nM\r\n--x--',
        ],
      ]) {
        const response = await post('/xapi/v1/accounts', type!, body!, headers);
        expect(response.statusCode, `${type} ${response.body}`).toBe(415);
        expect(errorCode(response)).toBe('UNSUPPORTED_MEDIA_TYPE');
      }
    }
  });

  it('are refused on the CSV import, which takes text/csv, and that only with the proof from a cookie', async () => {
    const csv = 'device_id,title\ncsrf-import-1,Imported';
    const url = '/xapi/v1/virtual-devices/import';
    expect(errorCode(await post(url, 'text/plain', csv, { cookie: session, ...PROOF }))).toBe(
      'UNSUPPORTED_MEDIA_TYPE',
    );
    expect(errorCode(await post(url, 'text/csv', csv, { cookie: session }))).toBe('CSRF_CHECK_FAILED');
    expect((await post(url, 'text/csv', csv, { cookie: session, ...PROOF })).statusCode).toBe(202);
  });
});
