import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeRouteScopes, unclassified } from './support/scope-route-probe.js';
import { buildScopeWorld, type ScopeWorld } from './support/scope-world.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * The permission-scope dimension of tenant isolation, generated from the route table: every
 * authenticated route is called by a user restricted to one permission scope of its account
 * (support/scope-route-probe.ts). Objects of the other scope answer 404, objects not bound to scopes
 * keep working, and no reply names a twin, state, device or value of the other scope.
 */

let t: TestApp;
let world: ScopeWorld;

beforeAll(async () => {
  t = await createTestApp();
  world = await buildScopeWorld(t);
}, 120_000);
afterAll(() => t?.close());

describe('permission scopes across the route table', () => {
  it('classifies every authenticated route', () => {
    expect(unclassified(t)).toEqual([]);
  });

  it('answers a restricted user on every route without showing it anything of other scopes', async () => {
    expect(await probeRouteScopes(t, world)).toEqual([]);
  }, 300_000);
});
