import { Collection, EntitySchema } from '@mikro-orm/core';
import { newId } from '../platform/crypto/ids.js';
import { Account } from '../accounts/account.entity.js';
import { Role } from '../roles/role.entity.js';
import { PermissionScope } from '../permission-scopes/permission-scope.entity.js';

export class User {
  id: string = newId();
  account!: Account;
  email!: string;
  name = '';
  /** argon2id; null for users who only log in through federated login. */
  passwordHash: string | null = null;
  locale = 'en';
  active = true;
  roles = new Collection<Role>(this);
  /** Empty: the user sees every twin and device of the account. */
  permissionScopes = new Collection<PermissionScope>(this);
  /** TOTP seed sealed with the server key; set at enrolment, live once `totpEnabled`. */
  totpSecretSealed: string | null = null;
  totpEnabled = false;
  /** Highest accepted 30-second step: a code is accepted once. */
  totpLastStep: number | null = null;
  lastLoginAt: Date | null = null;
  createdAt: Date = new Date();
  updatedAt: Date = new Date();
}

export const UserSchema = new EntitySchema<User>({
  class: User,
  tableName: 'users',
  properties: {
    id: { type: 'uuid', primary: true },
    account: { kind: 'm:1', entity: () => Account, deleteRule: 'cascade', index: true },
    email: { type: 'string', length: 320, unique: true },
    name: { type: 'string', length: 200 },
    passwordHash: { type: 'text', nullable: true, hidden: true },
    locale: { type: 'string', length: 16 },
    active: { type: 'boolean', default: true },
    roles: { kind: 'm:n', entity: () => Role, owner: true, pivotTable: 'user_roles' },
    permissionScopes: {
      kind: 'm:n',
      entity: () => PermissionScope,
      owner: true,
      pivotTable: 'user_permission_scopes',
    },
    totpSecretSealed: { type: 'text', nullable: true, hidden: true },
    totpEnabled: { type: 'boolean', default: false },
    totpLastStep: { type: 'bigint', nullable: true, hidden: true },
    lastLoginAt: { type: 'datetime', columnType: 'timestamptz', nullable: true },
    createdAt: { type: 'datetime', columnType: 'timestamptz' },
    updatedAt: { type: 'datetime', columnType: 'timestamptz', onUpdate: () => new Date() },
  },
});

/** One-time recovery codes, argon2id-hashed. */
export class RecoveryCode {
  id: string = newId();
  user!: User;
  codeHash!: string;
  usedAt: Date | null = null;
  createdAt: Date = new Date();
}

export const RecoveryCodeSchema = new EntitySchema<RecoveryCode>({
  class: RecoveryCode,
  tableName: 'recovery_codes',
  properties: {
    id: { type: 'uuid', primary: true },
    user: { kind: 'm:1', entity: () => User, deleteRule: 'cascade', index: true },
    codeHash: { type: 'text' },
    usedAt: { type: 'datetime', columnType: 'timestamptz', nullable: true },
    createdAt: { type: 'datetime', columnType: 'timestamptz' },
  },
});

/** Links a user to an identity at an OAuth 2.0 / OIDC provider. */
export class FederatedIdentity {
  id: string = newId();
  user!: User;
  issuer!: string;
  subject!: string;
  createdAt: Date = new Date();
}

export const FederatedIdentitySchema = new EntitySchema<FederatedIdentity>({
  class: FederatedIdentity,
  tableName: 'federated_identities',
  uniques: [{ properties: ['issuer', 'subject'] }],
  properties: {
    id: { type: 'uuid', primary: true },
    user: { kind: 'm:1', entity: () => User, deleteRule: 'cascade', index: true },
    issuer: { type: 'string', length: 500 },
    subject: { type: 'string', length: 500 },
    createdAt: { type: 'datetime', columnType: 'timestamptz' },
  },
});
