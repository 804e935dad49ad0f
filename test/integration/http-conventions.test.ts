import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login } from './support/identity.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/** The conventions of ARCHITECTURE.md section 3 that hold for every route. */

let t: TestApp;
let token: string;

beforeAll(async () => {
  t = await createTestApp({ env: { STELLWERK_BODY_LIMIT_BYTES: '4096' } });
  token = await login(t);
});
afterAll(() => t.close());

const post = (payload: string, contentType = 'application/json') =>
  t.app.inject({
    method: 'POST',
    url: '/xapi/v1/accounts',
    headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
    payload,
  });

const errorOf = (response: { json: <T>() => T }) =>
  response.json<{ error: { code: string; message: string; details: unknown[] } }>().error;

describe('request bodies', () => {
  it('answers 413 PAYLOAD_TOO_LARGE above the configured limit', async () => {
    const response = await post(JSON.stringify({ title: 'x'.repeat(5000) }));
    expect(response.statusCode).toBe(413);
    expect(errorOf(response).code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('answers 415 for a body that is not JSON', async () => {
    const response = await post('title=x', 'application/x-www-form-urlencoded');
    expect(response.statusCode).toBe(415);
    expect(errorOf(response).code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it.each([
    ['a number where text belongs', '{"title": 42}'],
    ['text where a boolean belongs', '{"title": "x", "mandatoryTwoFactor": "true"}'],
    ['a prototype key', '{"title": "x", "__proto__": {"admin": true}}'],
    ['a constructor.prototype key', '{"title": "x", "metaInfo": {"constructor": {"prototype": {"a": 1}}}}'],
    ['a NUL character', '{"title": "a\\u0000b"}'],
    ['a number beyond double range', '{"title": "x", "retentionMonths": 1e400}'],
    ['nesting 200 levels deep', `{"title": "x", "metaInfo": ${'{"a":'.repeat(200)}1${'}'.repeat(200)}}`],
    ['malformed JSON', '{"title": '],
    ['an array instead of an object', '[{"title": "x"}]'],
  ])('answers 400 VALIDATION_ERROR for %s, never 5xx', async (_name, payload) => {
    const response = await post(payload);
    expect(response.statusCode).toBe(400);
    const error = errorOf(response);
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.message.length).toBeGreaterThan(0);
    expect(Array.isArray(error.details)).toBe(true);
  });

  it('says which field breaks which rule of the schema, in words', async () => {
    const empty = errorOf(await post(JSON.stringify({ title: '' })));
    expect(empty).toEqual({
      code: 'VALIDATION_ERROR',
      message: 'Invalid body: title must not be empty',
      details: [
        {
          location: 'body',
          path: '/title',
          keyword: 'minLength',
          message: 'must not be empty',
          params: { limit: 1 },
        },
      ],
    });
    // A missing property is named by its own path, where a form shows the field.
    const missing = errorOf(await post(JSON.stringify({ description: 'no title' })));
    expect(missing.message).toBe('Invalid body: title is required');
    expect(missing.details).toEqual([expect.objectContaining({ path: '/title', keyword: 'required' })]);
    // A number beyond double range is refused before the schema, by the input guard: at its field,
    // with no schema keyword.
    const infinite = errorOf(await post('{"title": "x", "retentionMonths": 1e400}'));
    expect(infinite.details).toEqual([{ location: 'body', path: '/retentionMonths' }]);
    const page = await t.app.inject({
      url: '/xapi/v1/accounts?pageSize=501',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(page.statusCode).toBe(400);
    expect(errorOf(page).message).toBe('Invalid querystring: pageSize must be at most 500');
    expect(errorOf(page).details).toEqual([
      expect.objectContaining({ location: 'querystring', path: '/pageSize', keyword: 'maximum' }),
    ]);
  });

  it('did not pollute any prototype', () => {
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
    expect(({} as Record<string, unknown>).a).toBeUndefined();
  });
});

describe('routes and ids', () => {
  it('answers an unknown route with 404 and the error body', async () => {
    const response = await t.app.inject({ url: '/xapi/v1/no-such-thing' });
    expect(response.statusCode).toBe(404);
    expect(errorOf(response).code).toBe('NOT_FOUND');
  });

  it('answers an id that is not a UUID with 400 and an unknown UUID with 404', async () => {
    const headers = { authorization: `Bearer ${token}` };
    const bad = await t.app.inject({ url: '/xapi/v1/accounts/12', headers });
    expect(bad.statusCode).toBe(400);
    expect(errorOf(bad).code).toBe('VALIDATION_ERROR');
    const unknown = await t.app.inject({
      url: '/xapi/v1/accounts/01a200aa-989b-76c9-840b-4a0dd99a745f',
      headers,
    });
    expect(unknown.statusCode).toBe(404);
    expect(errorOf(unknown).code).toBe('NOT_FOUND');
  });

  it('answers an over-long path parameter with 414 and the error body', async () => {
    const response = await t.app.inject({ url: `/xapi/v1/accounts/${'a'.repeat(300)}` });
    expect(response.statusCode).toBe(414);
    expect(errorOf(response).code).toBe('URI_TOO_LONG');
  });

  it('creates ids as UUID v7', async () => {
    const response = await post(JSON.stringify({ title: 'Id check' }));
    expect(response.statusCode).toBe(201);
    expect(response.json<{ id: string }>().id).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
  });
});

describe('API documentation', () => {
  it('publishes an OpenAPI 3 document generated from the route schemas', async () => {
    const response = await t.app.inject({ url: '/xapi/v1/openapi.json' });
    expect(response.statusCode).toBe(200);
    const doc = response.json<{ openapi: string; paths: Record<string, Record<string, unknown>> }>();
    expect(doc.openapi).toMatch(/^3\./);
    const documented = Object.keys(doc.paths);
    // Every XAPI route of the route table appears, with its method.
    const xapi = t.ctx.routes.filter((r) => r.url.startsWith('/xapi/v1/') && r.schema && !r.schema.hide);
    expect(xapi.length).toBeGreaterThan(20);
    for (const route of xapi) {
      // A trailing wildcard (webhook message paths) is documented as the parameter `*`.
      const path = route.url.replace(/:(\w+)/g, '{$1}').replace(/\/\*$/, '/{*}');
      expect(documented, route.url).toContain(path);
      expect(Object.keys(doc.paths[path]!), route.url).toContain(route.method.toLowerCase());
    }
    const login = doc.paths['/xapi/v1/auth/login'] as { post: { requestBody: unknown } };
    expect(login.post.requestBody).toBeDefined();
  });

  it('serves browsable docs at /xapi/v1/docs', async () => {
    const response = await t.app.inject({ url: '/xapi/v1/docs/' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/text\/html/);
  });
});
