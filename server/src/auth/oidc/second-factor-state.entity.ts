import { EntitySchema } from '@mikro-orm/core';
import { User } from '../../users/user.entity.js';

/**
 * A federated login that passed the provider but still owes the user's Stellwerk second factor
 * (docs/adr/0031). Written by the callback, removed when the code is accepted or when it expires.
 */
export class OAuthSecondFactorState {
  /** SHA-256 of the token in the browser's HttpOnly cookie. */
  tokenHash!: string;
  user!: User;
  /** The provider identity to link once the code is accepted (matched by e-mail, not linked yet). */
  linkIssuer: string | null = null;
  linkSubject: string | null = null;
  returnTo = '/';
  expiresAt!: Date;
  createdAt: Date = new Date();
}

export const OAuthSecondFactorStateSchema = new EntitySchema<OAuthSecondFactorState>({
  class: OAuthSecondFactorState,
  tableName: 'oauth_second_factor_states',
  properties: {
    tokenHash: { type: 'string', length: 64, primary: true },
    user: { kind: 'm:1', entity: () => User, deleteRule: 'cascade', index: true },
    linkIssuer: { type: 'string', length: 500, nullable: true },
    linkSubject: { type: 'string', length: 500, nullable: true },
    returnTo: { type: 'string', length: 2000 },
    expiresAt: { type: 'datetime', columnType: 'timestamptz', index: true },
    createdAt: { type: 'datetime', columnType: 'timestamptz' },
  },
});
