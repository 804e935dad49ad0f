import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_ACTOR } from '../../server/src/audit/audit.service.js';
import {
  caller,
  errorCode,
  expectStatus,
  userWithPermissions,
  type Credentials,
  type ListBody,
} from './support/identity.js';
import { buildTenancyWorld, type TenancyWorld } from './support/tenancy-world.js';
import { createTestApp, type TestApp } from './support/test-app.js';

interface EventBody {
  id: string;
  accountId: string;
  occurredAt: string;
  actor: { kind: string; id: string | null };
  action: string;
  target: { type: string; id: string } | null;
  details: Record<string, unknown>;
}

let t: TestApp;
let world: TenancyWorld;
const parentActor = { kind: 'user' as const, id: '0195f0a0-0000-7000-8000-000000000001', accountId: '' };
const ownActor = { kind: 'apiKey' as const, id: '0195f0a0-0000-7000-8000-000000000002', accountId: '' };

beforeAll(async () => {
  t = await createTestApp();
  world = await buildTenancyWorld(t);
  parentActor.accountId = world.accounts.parent;
  ownActor.accountId = world.accounts.own;
  await t.withContext(async () => {
    const { audit } = t.services;
    for (const relation of ['own', 'child', 'sibling', 'parent'] as const) {
      await audit.record({
        accountId: world.accounts[relation],
        actor: relation === 'own' ? parentActor : ownActor,
        action: `test.${relation}`,
        target: { type: 'account', id: world.accounts[relation] },
        details: { note: relation, client_secret: 'must not be stored' },
      });
    }
    await audit.record({ accountId: world.accounts.own, actor: SYSTEM_ACTOR, action: 'test.system' });
  });
}, 120_000);
afterAll(() => t?.close());

const list = (query = '') =>
  caller(t, world.credentials.bearer as Credentials)('GET', `/xapi/v1/audit-events${query}`);

describe('audit events', () => {
  it('lists the caller’s account and those below, newest first, never a sibling’s or parent’s', async () => {
    const body = expectStatus<ListBody<EventBody>>(await list(), 200);
    expect(body.data.map((e) => e.action)).toEqual(['test.system', 'test.child', 'test.own']);
    expect(body.meta).toEqual({ page: 1, pageSize: 25, total: 3 });
    const own = body.data.find((e) => e.action === 'test.own')!;
    expect(own).toMatchObject({
      accountId: world.accounts.own,
      target: { type: 'account', id: world.accounts.own },
      details: { note: 'own', client_secret: '********' },
    });
    expect(Date.parse(own.occurredAt)).not.toBeNaN();
  });

  it('names actors of the caller’s account or below, not those of an account above', async () => {
    const body = expectStatus<ListBody<EventBody>>(await list(), 200);
    const byAction = Object.fromEntries(body.data.map((e) => [e.action, e.actor]));
    expect(byAction['test.own']).toEqual({ kind: 'user', id: null });
    expect(byAction['test.child']).toEqual({ kind: 'apiKey', id: ownActor.id });
    expect(byAction['test.system']).toEqual({ kind: 'system', id: null });
    expect(JSON.stringify(body)).not.toContain(world.accounts.parent);
  });

  it('filters by reachable account and action, sorts and pages; an unreachable account is 404', async () => {
    const child = expectStatus<ListBody<EventBody>>(await list(`?accountId=${world.accounts.child}`), 200);
    expect(child.data.map((e) => e.action)).toEqual(['test.child']);
    const byAction = expectStatus<ListBody<EventBody>>(await list('?action=test.own'), 200);
    expect(byAction.data.map((e) => e.action)).toEqual(['test.own']);
    const sorted = expectStatus<ListBody<EventBody>>(await list('?sort=action&pageSize=2&page=2'), 200);
    expect(sorted.data.map((e) => e.action)).toEqual(['test.system']);
    expect(sorted.meta).toEqual({ page: 2, pageSize: 2, total: 3 });
    for (const relation of ['sibling', 'parent'] as const) {
      const refused = await list(`?accountId=${world.accounts[relation]}`);
      expect(refused.statusCode).toBe(404);
    }
  });

  it('needs auditEvent.read: a digital-twin manager is refused', async () => {
    const rootAdmin = { authorization: `Bearer ${world.rootToken}` };
    const manager = await userWithPermissions(t, rootAdmin, 'Twin keeper', ['digitalTwin.manage'], {
      accountId: world.accounts.own,
    });
    const response = await caller(t, { authorization: `Bearer ${manager.token}` })(
      'GET',
      '/xapi/v1/audit-events',
    );
    expect(response.statusCode).toBe(403);
    expect(errorCode(response)).toBe('NO_PERMISSION_AUDITEVENT.READ');
  });

  it('records who hands out what: API keys, roles and the roles of users', async () => {
    const admin = caller(t, world.credentials.bearer as Credentials);
    const own = world.accounts.own;
    const key = expectStatus<{ id: string; key: string }>(
      await admin('POST', '/xapi/v1/api-keys', { title: 'Gateway', permissions: ['VirtualDevice.read'] }),
      201,
    );
    expectStatus(await admin('PUT', `/xapi/v1/api-keys/${key.id}`, { permissions: ['IotHub.read'] }), 200);
    expectStatus(await admin('DELETE', `/xapi/v1/api-keys/${key.id}`), 204);
    const role = expectStatus<{ id: string }>(
      await admin('POST', '/xapi/v1/roles', { name: 'Auditors', permissions: ['auditEvent.read'] }),
      201,
    );
    expectStatus(await admin('PUT', `/xapi/v1/roles/${role.id}`, { permissions: ['all.read'] }), 200);
    const user = expectStatus<{ id: string }>(
      await admin('POST', '/xapi/v1/users', { email: 'audited@stellwerk.test', suppressInvitation: true }),
      201,
    );
    expectStatus(await admin('PUT', `/xapi/v1/users/${user.id}/roles/${role.id}`), 200);
    expectStatus(await admin('DELETE', `/xapi/v1/users/${user.id}/roles/${role.id}`), 200);

    const events = expectStatus<ListBody<EventBody>>(
      await list(`?accountId=${own}&sort=occurredAt&pageSize=100`),
      200,
    ).data.slice(-7);
    expect(events.map((e) => [e.action, e.target?.type, e.details.permissions])).toEqual([
      ['apiKey.create', 'apiKey', ['VirtualDevice.read']],
      ['apiKey.change', 'apiKey', ['IotHub.read']],
      ['apiKey.delete', 'apiKey', ['IotHub.read']],
      ['role.create', 'role', ['auditEvent.read']],
      ['role.change', 'role', ['all.read']],
      ['user.role.add', 'user', ['all.read']],
      ['user.role.remove', 'user', ['all.read']],
    ]);
    const ownAdmin = events[0]!.actor;
    expect(ownAdmin.kind).toBe('user');
    expect(ownAdmin.id).not.toBeNull();
    expect(JSON.stringify(events)).not.toContain(key.key);
  });
});
