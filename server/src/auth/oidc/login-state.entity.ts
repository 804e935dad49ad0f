import { EntitySchema } from '@mikro-orm/core';
import { Account } from '../../accounts/account.entity.js';

/**
 * One federated login in flight: written by `/api/v1/oauth2/authorize`, consumed once by the
 * callback. Kept in PostgreSQL (not in memory) so the callback may land on another node.
 */
export class OAuthLoginState {
  /** SHA-256 of the `state` parameter; the clear value only travels through the browser. */
  stateHash!: string;
  account!: Account;
  /** SHA-256 of the browser-binding cookie: a callback URL replayed in another browser is refused. */
  bindingHash!: string;
  /** PKCE verifier; must be sent in clear to the token endpoint, lives at most 10 minutes. */
  codeVerifier!: string;
  /** Null when no ID token is validated (no `openid` scope or no configured issuer). */
  nonce: string | null = null;
  /** Same-origin path to land on after login. */
  returnTo = '/';
  expiresAt!: Date;
  createdAt: Date = new Date();
}

export const OAuthLoginStateSchema = new EntitySchema<OAuthLoginState>({
  class: OAuthLoginState,
  tableName: 'oauth_login_states',
  properties: {
    stateHash: { type: 'string', length: 64, primary: true },
    account: { kind: 'm:1', entity: () => Account, deleteRule: 'cascade', index: true },
    bindingHash: { type: 'string', length: 64 },
    codeVerifier: { type: 'string', length: 128 },
    nonce: { type: 'string', length: 128, nullable: true },
    returnTo: { type: 'string', length: 2000 },
    expiresAt: { type: 'datetime', columnType: 'timestamptz', index: true },
    createdAt: { type: 'datetime', columnType: 'timestamptz' },
  },
});
