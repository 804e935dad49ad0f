import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import { hashSecret } from '../platform/crypto/password.js';
import { randomToken, sha256 } from '../platform/crypto/tokens.js';
import { errors } from '../platform/errors.js';
import type { Mailer } from '../platform/mail/mailer.js';
import { invitationMail } from './invitation.mail.js';
import { UserInvitation } from './invitation.entity.js';
import { User } from './user.entity.js';
import { assertPasswordPolicy } from './user.service.js';

export const INVITATION_TTL_MS = 7 * 24 * 3600 * 1000;

/** How the link reached (or did not reach) the user: `log` when no SMTP server is configured. */
export type InvitationDelivery = 'smtp' | 'log' | 'failed';

export interface IssuedInvitation {
  expiresAt: Date;
  delivery: InvitationDelivery;
  /**
   * The link itself when no mail carried it (`log`, `failed`): the administrator who invited the
   * user hands it over. A mailed link is not repeated here, so it reaches only the mailbox.
   */
  link?: string;
}

export interface InvitationDeps {
  em: () => EntityManager;
  mailer: Mailer;
  publicUrl: string;
  log: FastifyBaseLogger;
  clock: () => Date;
}

const invalid = () =>
  errors.forbidden('INVALID_INVITATION', 'The invitation link is invalid, expired or has been used already');

/**
 * Invitation links for users created without a password. A new link replaces the open ones; the
 * link works once and for 7 days. A mail failure does not undo the user: the reply says so and
 * the invitation can be sent again.
 */
export class InvitationService {
  constructor(private readonly deps: InvitationDeps) {}

  private get em() {
    return this.deps.em();
  }

  async issue(user: User): Promise<IssuedInvitation> {
    const now = this.deps.clock();
    await this.em.nativeDelete(UserInvitation, { user: user.id, acceptedAt: null });
    const token = randomToken(32);
    const invitation = new UserInvitation();
    invitation.user = user;
    invitation.tokenHash = sha256(token);
    invitation.createdAt = now;
    invitation.expiresAt = new Date(now.getTime() + INVITATION_TTL_MS);
    await this.em.persistAndFlush(invitation);

    const link = `${this.deps.publicUrl}/invitation?token=${encodeURIComponent(token)}`;
    const delivery = await this.deliver(user, link, invitation.expiresAt);
    return { expiresAt: invitation.expiresAt, delivery, ...(delivery === 'smtp' ? {} : { link }) };
  }

  /**
   * The e-mail address an open invitation was sent to: what the link's holder was told in the mail
   * or by the administrator anyway. Unknown, spent and expired links are refused alike.
   */
  async invitedEmail(token: string): Promise<string> {
    return (await this.open(token)).user.email;
  }

  /** Sets the password of the invited user; the link is spent in the same transaction. */
  async accept(token: string, password: string): Promise<User> {
    assertPasswordPolicy(password);
    const invitation = await this.open(token);
    const passwordHash = await hashSecret(password);
    const now = this.deps.clock();
    await this.em.transactional(async (em) => {
      // Conditional update: of two simultaneous accepts only one finds the link unused.
      const spent = await em.nativeUpdate(
        UserInvitation,
        { id: invitation.id, acceptedAt: null },
        { acceptedAt: now },
      );
      if (spent !== 1) throw invalid();
      await em.nativeUpdate(User, { id: invitation.user.id }, { passwordHash, updatedAt: now });
      await em.nativeDelete(UserInvitation, { user: invitation.user.id, acceptedAt: null });
    });
    return invitation.user;
  }

  private async open(token: string): Promise<UserInvitation> {
    const invitation = await this.em.findOne(
      UserInvitation,
      { tokenHash: sha256(token) },
      { populate: ['user'] },
    );
    if (!invitation || invitation.acceptedAt || invitation.expiresAt <= this.deps.clock()) throw invalid();
    return invitation;
  }

  /** Whether the user has an unused, unexpired invitation. */
  async pending(userIds: string[]): Promise<Set<string>> {
    if (userIds.length === 0) return new Set();
    const rows = await this.em.find(
      UserInvitation,
      { user: { $in: userIds }, acceptedAt: null, expiresAt: { $gt: this.deps.clock() } },
      { fields: ['user'] },
    );
    return new Set(rows.map((r) => r.user.id));
  }

  private async deliver(user: User, link: string, expiresAt: Date): Promise<InvitationDelivery> {
    const { mailer, log } = this.deps;
    if (!mailer.enabled) {
      // No SMTP configured: the operator hands the link over by other means.
      log.warn(
        { userId: user.id, email: user.email, link, expiresAt },
        'no SMTP server configured; invitation link not mailed',
      );
      return 'log';
    }
    try {
      await mailer.send({
        to: user.email,
        ...invitationMail({ name: user.name, email: user.email, link, expiresAt }),
      });
      return 'smtp';
    } catch (error) {
      log.error({ err: error, userId: user.id }, 'invitation mail could not be sent');
      return 'failed';
    }
  }
}
