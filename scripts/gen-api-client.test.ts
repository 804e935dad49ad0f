import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GENERATED_FILE, renderApiClient } from './gen-api-client.js';
import { schemaToType } from './openapi-to-ts.js';

describe('the console API client', () => {
  it('renderer/src/api/generated.ts matches the OpenAPI document (run `npm run gen:api` when it fails)', async () => {
    const expected = await renderApiClient();
    const committed = fs.existsSync(GENERATED_FILE) ? fs.readFileSync(GENERATED_FILE, 'utf8') : '';
    expect(committed === expected, 'renderer/src/api/generated.ts is stale: run `npm run gen:api`').toBe(
      true,
    );
    expect(expected).toContain("'POST /api/v1/auth/login': {");
  }, 30_000);

  it('turns the JSON schemas TypeBox produces into TypeScript', () => {
    expect(
      schemaToType({
        type: 'object',
        required: ['id'],
        properties: {
          id: { type: 'string' },
          'odd-name': { anyOf: [{ type: 'number' }, { type: 'null' }] },
          tags: { type: 'array', items: { enum: ['a', 'b'] } },
        },
        additionalProperties: false,
      }),
    ).toBe('{ id: string; "odd-name"?: number | null; tags?: ("a" | "b")[]; }');
    expect(schemaToType({ type: 'object', additionalProperties: { type: 'integer' } })).toBe(
      'Record<string, number>',
    );
    expect(schemaToType({ type: 'object', properties: { a: { const: 1 } } })).toBe('{ a?: 1; }');
    expect(schemaToType({ type: ['string', 'null'] })).toBe('string | null');
    expect(schemaToType({})).toBe('unknown');
  });
});
