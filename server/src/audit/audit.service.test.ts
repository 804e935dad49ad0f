import { describe, expect, it } from 'vitest';
import type { Principal } from '../auth/principal.js';
import { Account } from '../accounts/account.entity.js';
import { AuditEvent } from './audit-event.entity.js';
import { actorVisible, withoutSecrets } from './audit.service.js';

describe('withoutSecrets', () => {
  it('masks secret-sounding keys at any depth and keeps the rest', () => {
    expect(
      withoutSecrets({
        client_id: 'stellwerk',
        client_secret: 'hunter2',
        nested: { password: 'x', list: [{ accessToken: 't', title: 'kept' }] },
        changed: ['client_secret', 'issuer'],
      }),
    ).toEqual({
      client_id: 'stellwerk',
      client_secret: '********',
      nested: { password: '********', list: [{ accessToken: '********', title: 'kept' }] },
      changed: ['client_secret', 'issuer'],
    });
  });
});

describe('actorVisible', () => {
  const event = (actorAccountId: string | null) => {
    const account = new Account();
    account.path = ['root', 'parent', 'own', 'child'];
    const e = new AuditEvent();
    e.account = account;
    e.actorAccountId = actorAccountId;
    return e;
  };
  const reader = { accountId: 'own' } as Principal;

  it('shows actors of the reader’s account and below, hides those above and the system', () => {
    expect(actorVisible(event('own'), reader)).toBe(true);
    expect(actorVisible(event('child'), reader)).toBe(true);
    expect(actorVisible(event('parent'), reader)).toBe(false);
    expect(actorVisible(event('root'), reader)).toBe(false);
    expect(actorVisible(event(null), reader)).toBe(false);
    expect(actorVisible(event('elsewhere'), reader)).toBe(false);
  });
});
