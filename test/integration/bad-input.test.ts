import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteInfo } from '../../server/src/context.js';
import { fromSchema, toJsonText, toQuery } from './support/schema-arbitrary.js';
import type { JsonSchema } from './support/schema-sample.js';
import { login } from './support/identity.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createTestApp, type TestApp } from './support/test-app.js';

/**
 * Property-based: for every route in the route table, bodies, query strings and path
 * parameters generated from its own schemas (with hostile values mixed in) never produce a 5xx.
 * Requests run as the root admin so they get past authorisation into the handlers.
 */

const RUNS_PER_ROUTE = Number(process.env.STELLWERK_FUZZ_RUNS ?? 25);
/** Routes whose success would end the admin's session; they are fuzzed with a throwaway login. */
const ENDS_SESSION = /\/(logout|2fa)/;

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

const schemaOf = (route: RouteInfo, part: string) => route.schema?.[part] as JsonSchema | undefined;

describe('bad input on every route', () => {
  it('has routes to probe', () => {
    expect(t.ctx.routes.length).toBeGreaterThan(10);
  });

  it('never answers 5xx', async () => {
    const failures: string[] = [];
    let token = await login(t, ADMIN_EMAIL, ADMIN_PASSWORD);
    const routes = t.ctx.routes.filter((r) => r.url !== '/metrics' && !r.url.startsWith('/xapi/v1/docs'));
    for (const route of routes) {
      if (ENDS_SESSION.test(route.url)) token = await login(t, ADMIN_EMAIL, ADMIN_PASSWORD);
      const hasBody = ['POST', 'PUT', 'PATCH', 'DELETE'].includes(route.method);
      const request = fc.record({
        params: fromSchema(schemaOf(route, 'params') ?? { type: 'object', properties: {} }),
        query: fromSchema(schemaOf(route, 'querystring') ?? { type: 'object', properties: {} }),
        body: hasBody ? fromSchema(schemaOf(route, 'body')) : fc.constant(undefined),
        credential: fc.constantFrom('bearer', 'apiKeyGarbage', 'none'),
      });
      await fc.assert(
        fc.asyncProperty(request, async ({ params, query, body, credential }) => {
          const url = route.url.replace(/:(\w+)/g, (_m, name: string) => {
            const value = (params as Record<string, unknown> | null)?.[name];
            const text = typeof value === 'string' && value !== '' ? value : toJsonText(value ?? 'x');
            // A lone surrogate cannot be put in a URL at all; send its replacement character.
            return encodeURIComponent(text.toWellFormed());
          });
          const headers: Record<string, string> =
            credential === 'bearer'
              ? { authorization: `Bearer ${token}` }
              : credential === 'apiKeyGarbage'
                ? { 'x-api-key': 'swk_not-a-real-key' }
                : {};
          const response = await t.app.inject({
            method: route.method as 'GET',
            url,
            query: toQuery(query),
            headers: { ...headers, ...(hasBody ? { 'content-type': 'application/json' } : {}) },
            ...(hasBody ? { payload: toJsonText(body) } : {}),
          });
          if (response.statusCode >= 500) {
            failures.push(
              `${route.method} ${url} ${toJsonText(body).slice(0, 200)} → ${response.statusCode} ${response.body.slice(0, 200)}`,
            );
          }
          if (response.statusCode >= 400) {
            const error = response.json<{ error?: { code?: unknown } }>().error;
            if (typeof error?.code !== 'string')
              failures.push(`${route.method} ${url} → ${response.statusCode} without error body`);
          }
        }),
        { numRuns: RUNS_PER_ROUTE, endOnFailure: true },
      );
    }
    expect(failures).toEqual([]);
  }, 600_000);
});
