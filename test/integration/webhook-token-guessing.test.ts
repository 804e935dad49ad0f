import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, errorCode, login } from './support/identity.js';
import { createConnector } from './support/connectors.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * A webhook URL's token is a credential. Guessing tokens must cost the guesser its address's budget
 * of invalid credentials, as invalid API keys do, and never a fresh budget per token string.
 */

const FAILURES = 5;
let t: TestApp;
let path: string;

beforeAll(async () => {
  t = await createTestApp({ env: { STELLWERK_AUTH_FAILURES_PER_ADDRESS: String(FAILURES) } });
  const admin = bearer(await login(t));
  const connector = await createConnector(t, admin, { type: 'webhook-in', title: 'Incoming' });
  path = new URL(connector.apiEndpoint!).pathname;
});
afterAll(() => t?.close());

const post = (url: string, remoteAddress: string) =>
  t.app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ device_id: 'meter-1', flow: 1 }),
    remoteAddress,
  });

const randomToken = () => `guess${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;

describe('webhook URL tokens', () => {
  it('stop an address that guesses tokens after its budget of invalid credentials', async () => {
    const guesser = '10.30.0.1';
    const answers: number[] = [];
    for (let i = 0; i < FAILURES + 3; i++) {
      answers.push((await post(`/xapi/v1/webhooks/${randomToken()}`, guesser)).statusCode);
    }
    expect(answers.slice(0, FAILURES)).toEqual(Array(FAILURES).fill(404));
    expect(answers.slice(FAILURES)).toEqual(Array(3).fill(429));
    const refused = await post(`/xapi/v1/webhooks/${randomToken()}`, guesser);
    expect(errorCode(refused)).toBe('API_LIMIT_REACHED');
    expect(refused.headers['retry-after']).toBeDefined();

    // Other senders, and the real URL, are not affected.
    expect((await post(path, '10.30.0.2')).statusCode).toBe(202);
    expect((await post(`/xapi/v1/webhooks/${randomToken()}`, '10.30.0.3')).statusCode).toBe(404);
  });

  it('count a valid URL per connector, never per spelling of the request', async () => {
    const sender = '10.31.0.1';
    for (let i = 0; i < FAILURES + 3; i++) expect((await post(path, sender)).statusCode).toBe(202);
  });
});
