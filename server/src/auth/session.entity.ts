import { EntitySchema } from '@mikro-orm/core';
import { newId } from '../platform/crypto/ids.js';
import { User } from '../users/user.entity.js';

/**
 * bearer: XAPI token from login; cookie: console session; setup: a token that only unlocks
 * 2FA enrolment for a user whose account requires 2FA.
 */
export type SessionKind = 'bearer' | 'cookie' | 'setup';

export class Session {
  id: string = newId();
  user!: User;
  kind!: SessionKind;
  tokenHash!: string;
  expiresAt!: Date;
  revokedAt: Date | null = null;
  clientIp: string | null = null;
  userAgent: string | null = null;
  createdAt: Date = new Date();
}

export const SessionSchema = new EntitySchema<Session>({
  class: Session,
  tableName: 'sessions',
  properties: {
    id: { type: 'uuid', primary: true },
    user: { kind: 'm:1', entity: () => User, deleteRule: 'cascade', index: true },
    kind: { type: 'string', length: 16 },
    tokenHash: { type: 'string', length: 64, unique: true },
    expiresAt: { type: 'datetime', columnType: 'timestamptz' },
    revokedAt: { type: 'datetime', columnType: 'timestamptz', nullable: true },
    clientIp: { type: 'string', length: 64, nullable: true },
    userAgent: { type: 'string', length: 400, nullable: true },
    createdAt: { type: 'datetime', columnType: 'timestamptz' },
  },
});

/** Failed-login counters per e-mail and per client address, shared by every node. */
export class LoginThrottle {
  key!: string;
  failures = 0;
  /** Attempts whose secret is being checked right now; they hold their place in the budget. */
  pending = 0;
  windowStart: Date = new Date();
  lockedUntil: Date | null = null;
}

export const LoginThrottleSchema = new EntitySchema<LoginThrottle>({
  class: LoginThrottle,
  tableName: 'login_throttle',
  properties: {
    key: { type: 'string', length: 400, primary: true },
    failures: { type: 'integer' },
    pending: { type: 'integer', default: 0 },
    windowStart: { type: 'datetime', columnType: 'timestamptz' },
    lockedUntil: { type: 'datetime', columnType: 'timestamptz', nullable: true },
  },
});
