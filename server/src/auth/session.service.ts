import type { EntityManager } from '@mikro-orm/postgresql';
import { randomToken, sha256 } from '../platform/crypto/tokens.js';
import { Session, type SessionKind } from './session.entity.js';
import type { User } from '../users/user.entity.js';

export interface IssuedSession {
  token: string;
  session: Session;
}

export interface ClientInfo {
  ip?: string;
  userAgent?: string;
}

/** Opaque tokens: the client holds 256 random bits, the database only their SHA-256. */
export class SessionService {
  constructor(
    private readonly em: () => EntityManager,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  async issue(
    user: User,
    kind: SessionKind,
    ttlSeconds: number,
    client: ClientInfo = {},
  ): Promise<IssuedSession> {
    const token = randomToken();
    const now = this.clock();
    const session = new Session();
    session.user = user;
    session.kind = kind;
    session.tokenHash = sha256(token);
    session.createdAt = now;
    session.expiresAt = new Date(now.getTime() + ttlSeconds * 1000);
    session.clientIp = client.ip?.slice(0, 64) ?? null;
    session.userAgent = client.userAgent?.slice(0, 400) ?? null;
    await this.em().persistAndFlush(session);
    return { token, session };
  }

  /** The live (unrevoked, unexpired) session a token belongs to. */
  findLive(sessionId: string): Promise<Session | null> {
    return this.em().findOne(Session, { id: sessionId, revokedAt: null, expiresAt: { $gt: this.clock() } });
  }

  async revoke(sessionId: string): Promise<void> {
    await this.em().nativeUpdate(Session, { id: sessionId, revokedAt: null }, { revokedAt: this.clock() });
  }

  /** Revokes whatever session a presented token names; unknown tokens are ignored. */
  async revokeToken(token: string): Promise<void> {
    await this.em().nativeUpdate(
      Session,
      { tokenHash: sha256(token), revokedAt: null },
      { revokedAt: this.clock() },
    );
  }

  async revokeAllOfUser(userId: string, kinds?: SessionKind[]): Promise<void> {
    await this.em().nativeUpdate(
      Session,
      { user: userId, revokedAt: null, ...(kinds ? { kind: { $in: kinds } } : {}) },
      { revokedAt: this.clock() },
    );
  }

  /** Drops sessions that expired or were revoked more than a day ago. */
  async purgeExpired(): Promise<number> {
    const dayAgo = new Date(this.clock().getTime() - 86_400_000);
    return this.em().nativeDelete(Session, {
      $or: [{ expiresAt: { $lt: dayAgo } }, { revokedAt: { $lt: dayAgo } }],
    });
  }
}
