import { randomInt } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import QRCode from 'qrcode';
import { hashSecret, verifySecret } from '../platform/crypto/password.js';
import type { SecretBox } from '../platform/crypto/secret-box.js';
import { AppError, errors } from '../platform/errors.js';
import { RecoveryCode, User } from '../users/user.entity.js';
import { matchTotp, newTotpSecret, totpUrl } from './totp.js';

export const RECOVERY_CODE_COUNT = 10;
// Crockford-style alphabet without 0/1/i/l/o, so codes survive being read aloud or written down.
const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

export interface Enrolment {
  secret: string;
  otpauthUrl: string;
  /** PNG data URL of the otpauth URL. */
  qrCode: string;
}

export interface SecondFactor {
  otp?: string;
  recoveryCode?: string;
}

/**
 * Runs one check of a user's code inside the caller's throttle (auth.service.ts holds the place
 * in the account's and the address's budgets); `false` counts as a failure.
 */
export type CodeGuard = (user: User, check: () => Promise<boolean>) => Promise<boolean>;

export const invalidTwoFactorCode = (status = 422) =>
  new AppError('INVALID_TWO_FACTOR_CODE', status, 'The two-factor code is not valid or was used already');

/** `abcde-fghjk`: 10 characters of a 31-letter alphabet, about 50 bits. */
export function newRecoveryCode(): string {
  const chars = Array.from({ length: 10 }, () => RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)]);
  return `${chars.slice(0, 5).join('')}-${chars.slice(5).join('')}`;
}

const normaliseRecoveryCode = (code: string): string => code.toLowerCase().replace(/[\s-]/g, '');

/**
 * TOTP enrolment, activation, deactivation and the second-factor check at login. Callers pass
 * the signed-in user's own id. A code's time step is stored when it is accepted, so each code
 * works once, also across nodes (the update is conditional on the stored step).
 */
export class TwoFactorService {
  constructor(
    private readonly em: () => EntityManager,
    private readonly secretBox: SecretBox,
    private readonly clock: () => Date,
  ) {}

  /** Starts (or restarts) enrolment: a new seed, stored sealed, not yet active. */
  async enrol(userId: string): Promise<Enrolment> {
    const user = await this.em().findOneOrFail(User, { id: userId });
    if (user.totpEnabled) {
      throw errors.conflict(
        'TWO_FACTOR_ALREADY_ENABLED',
        'Two-factor authentication is already active; deactivate it first',
      );
    }
    const secret = newTotpSecret();
    user.totpSecretSealed = this.secretBox.seal(secret);
    user.totpLastStep = null;
    await this.em().flush();
    const otpauthUrl = totpUrl(secret, user.email);
    return { secret, otpauthUrl, qrCode: await QRCode.toDataURL(otpauthUrl, { errorCorrectionLevel: 'M' }) };
  }

  /** Confirms enrolment with a current code; returns the recovery codes, shown this once. */
  async activate(userId: string, otp: string, guard: CodeGuard): Promise<string[]> {
    const user = await this.em().findOneOrFail(User, { id: userId });
    if (user.totpEnabled)
      throw errors.conflict('TWO_FACTOR_ALREADY_ENABLED', 'Two-factor authentication is already active');
    if (!user.totpSecretSealed) {
      throw errors.conflict('TWO_FACTOR_NOT_ENROLLED', 'Start enrolment first (POST /xapi/v1/users/me/2fa)');
    }
    if (!(await guard(user, () => this.consumeOtp(user, otp)))) throw invalidTwoFactorCode();

    const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
    const hashes = await Promise.all(codes.map((c) => hashSecret(normaliseRecoveryCode(c))));
    await this.em().transactional(async (em) => {
      await em.nativeDelete(RecoveryCode, { user: userId });
      for (const codeHash of hashes) {
        const row = new RecoveryCode();
        row.user = em.getReference(User, userId);
        row.codeHash = codeHash;
        row.createdAt = this.clock();
        em.persist(row);
      }
      await em.nativeUpdate(User, { id: userId }, { totpEnabled: true });
    });
    return codes;
  }

  /** Turns 2FA off; needs a valid current code (or an unused recovery code). */
  async deactivate(userId: string, factor: SecondFactor, guard: CodeGuard): Promise<void> {
    const user = await this.em().findOneOrFail(User, { id: userId });
    if (!user.totpEnabled)
      throw errors.conflict('TWO_FACTOR_NOT_ENABLED', 'Two-factor authentication is not active');
    if (!(await guard(user, () => this.verifyFactor(user, factor)))) throw invalidTwoFactorCode();
    await this.em().transactional(async (em) => {
      await em.nativeDelete(RecoveryCode, { user: userId });
      await em.nativeUpdate(
        User,
        { id: userId },
        { totpEnabled: false, totpSecretSealed: null, totpLastStep: null },
      );
    });
  }

  /**
   * Checks and consumes a second factor: an unused TOTP code, or else an unused recovery code.
   * Unthrottled: the caller holds the place in the budgets (the login, or a `CodeGuard`).
   */
  async verifyFactor(user: User, factor: SecondFactor): Promise<boolean> {
    if (factor.otp) return this.consumeOtp(user, factor.otp);
    if (factor.recoveryCode) return this.consumeRecoveryCode(user.id, factor.recoveryCode);
    return false;
  }

  private async consumeOtp(user: User, otp: string): Promise<boolean> {
    if (!user.totpSecretSealed) return false;
    const lastStep = user.totpLastStep === null ? null : Number(user.totpLastStep);
    const step = await matchTotp(this.secretBox.open(user.totpSecretSealed), otp, this.clock(), lastStep);
    if (step === null) return false;
    // Conditional on the stored step: two nodes racing with the same code cannot both win.
    const updated = await this.em().nativeUpdate(
      User,
      { id: user.id, $or: [{ totpLastStep: null }, { totpLastStep: { $lt: step } }] },
      { totpLastStep: step },
    );
    return updated === 1;
  }

  private async consumeRecoveryCode(userId: string, code: string): Promise<boolean> {
    const candidate = normaliseRecoveryCode(code);
    if (candidate.length === 0) return false;
    const unused = await this.em().find(RecoveryCode, { user: userId, usedAt: null });
    const matches = await Promise.all(unused.map((row) => verifySecret(row.codeHash, candidate)));
    const hit = unused[matches.indexOf(true)];
    if (!hit) return false;
    const updated = await this.em().nativeUpdate(
      RecoveryCode,
      { id: hit.id, usedAt: null },
      { usedAt: this.clock() },
    );
    return updated === 1;
  }

  remainingRecoveryCodes(userId: string): Promise<number> {
    return this.em().count(RecoveryCode, { user: userId, usedAt: null });
  }
}
