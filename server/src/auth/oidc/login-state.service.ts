import type { EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../../accounts/account.entity.js';
import { randomToken, sha256 } from '../../platform/crypto/tokens.js';
import { OAuthLoginState } from './login-state.entity.js';

/** A federated login must come back from the provider within this time. */
export const LOGIN_STATE_TTL_SECONDS = 600;

export interface NewLoginState {
  accountId: string;
  binding: string;
  codeVerifier: string;
  nonce: string | null;
  returnTo: string;
}

export interface ConsumedLoginState {
  accountId: string;
  bindingHash: string;
  codeVerifier: string;
  nonce: string | null;
  returnTo: string;
}

interface StateRow {
  account_id: string;
  binding_hash: string;
  code_verifier: string;
  nonce: string | null;
  return_to: string;
  expires_at: Date;
}

/** Server-side state of federated logins in flight: single use, expiring, shared by all nodes. */
export class LoginStateService {
  constructor(
    private readonly em: () => EntityManager,
    private readonly clock: () => Date,
  ) {}

  /** Stores a new login and returns its `state` parameter (256 random bits). */
  async create(input: NewLoginState): Promise<string> {
    const now = this.clock();
    // Expired rows of abandoned logins are dropped here: the table stays as small as the logins in flight.
    await this.em().nativeDelete(OAuthLoginState, { expiresAt: { $lt: now } });
    const state = randomToken();
    const row = new OAuthLoginState();
    row.stateHash = sha256(state);
    row.account = this.em().getReference(Account, input.accountId);
    row.bindingHash = sha256(input.binding);
    row.codeVerifier = input.codeVerifier;
    row.nonce = input.nonce;
    row.returnTo = input.returnTo;
    row.createdAt = now;
    row.expiresAt = new Date(now.getTime() + LOGIN_STATE_TTL_SECONDS * 1000);
    await this.em().persistAndFlush(row);
    return state;
  }

  /**
   * Removes the login and returns it if it existed and had not expired. One DELETE … RETURNING:
   * of two concurrent callbacks with the same state only one gets the row.
   */
  async consume(state: string): Promise<ConsumedLoginState | null> {
    const rows = await this.em()
      .getConnection()
      .execute<StateRow[]>(
        `DELETE FROM oauth_login_states WHERE state_hash = ?
         RETURNING account_id, binding_hash, code_verifier, nonce, return_to, expires_at`,
        [sha256(state)],
      );
    const row = rows[0];
    if (!row || new Date(row.expires_at).getTime() <= this.clock().getTime()) return null;
    return {
      accountId: row.account_id,
      bindingHash: row.binding_hash,
      codeVerifier: row.code_verifier,
      nonce: row.nonce,
      returnTo: row.return_to,
    };
  }
}
