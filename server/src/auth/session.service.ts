import type { EntityManager } from '@mikro-orm/postgresql';
import { randomToken, sha256 } from '../platform/crypto/tokens.js';
import { Session, type SessionKind } from './session.entity.js';
import type { User } from '../users/user.entity.js';

export interface IssuedSession {
  token: string;
  session: Session;
}

/** Opaque tokens: the client holds 256 random bits, the database only their SHA-256. */
export class SessionService {
  constructor(private readonly em: () => EntityManager) {}

  async issue(
    user: User,
    kind: SessionKind,
    ttlSeconds: number,
    client: { ip?: string; userAgent?: string } = {},
  ): Promise<IssuedSession> {
    const token = randomToken();
    const session = new Session();
    session.user = user;
    session.kind = kind;
    session.tokenHash = sha256(token);
    session.expiresAt = new Date(Date.now() + ttlSeconds * 1000);
    session.clientIp = client.ip?.slice(0, 64) ?? null;
    session.userAgent = client.userAgent?.slice(0, 400) ?? null;
    await this.em().persistAndFlush(session);
    return { token, session };
  }

  async revoke(sessionId: string): Promise<void> {
    await this.em().nativeUpdate(Session, { id: sessionId, revokedAt: null }, { revokedAt: new Date() });
  }

  async revokeAllOfUser(userId: string, kinds?: SessionKind[]): Promise<void> {
    await this.em().nativeUpdate(
      Session,
      { user: userId, revokedAt: null, ...(kinds ? { kind: { $in: kinds } } : {}) },
      { revokedAt: new Date() },
    );
  }

  /** Drops sessions that expired or were revoked more than a day ago. */
  async purgeExpired(): Promise<number> {
    const dayAgo = new Date(Date.now() - 86_400_000);
    return this.em().nativeDelete(Session, { $or: [{ expiresAt: { $lt: dayAgo } }, { revokedAt: { $lt: dayAgo } }] });
  }
}
