import type { FastifyReply, FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { csrfGuard } from './csrf.js';

const guard = csrfGuard('https://iot.example.com');

const request = (method: string, url: string, headers: Record<string, string> = {}, matched = true) =>
  ({ method, url, headers, routeOptions: { url: matched ? url : undefined } }) as unknown as FastifyRequest;

const run = (r: FastifyRequest) => guard(r, {} as FastifyReply);

describe('csrfGuard', () => {
  it('lets safe methods, the XAPI, the hub API and unknown routes through', async () => {
    await expect(run(request('GET', '/api/v1/user'))).resolves.toBeUndefined();
    await expect(run(request('POST', '/xapi/v1/accounts'))).resolves.toBeUndefined();
    await expect(run(request('POST', '/hub/api/things'))).resolves.toBeUndefined();
    await expect(run(request('POST', '/api/v1/nothing', {}, false))).resolves.toBeUndefined();
  });

  it('refuses a state-changing /api request without the header or the site origin', async () => {
    await expect(run(request('POST', '/api/v1/auth/logout'))).rejects.toMatchObject({
      code: 'CSRF_CHECK_FAILED',
      status: 403,
    });
    await expect(
      run(request('DELETE', '/api/v1/user/2fa', { origin: 'https://evil.example' })),
    ).rejects.toMatchObject({
      code: 'CSRF_CHECK_FAILED',
    });
  });

  it('accepts X-Requested-With or the same origin', async () => {
    await expect(
      run(request('POST', '/api/v1/auth/logout', { 'x-requested-with': 'XMLHttpRequest' })),
    ).resolves.toBeUndefined();
    await expect(
      run(request('PUT', '/api/v1/user', { origin: 'https://iot.example.com' })),
    ).resolves.toBeUndefined();
  });
});
