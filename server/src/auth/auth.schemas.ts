import { Type } from 'typebox';
import { Timestamp, Uuid } from '../platform/http/schemas.js';
import type { User } from '../users/user.entity.js';

const Otp = Type.String({ pattern: '^[0-9]{6}$', description: 'Current 6-digit TOTP code' });
const RecoveryCodeInput = Type.String({
  minLength: 1,
  maxLength: 64,
  description: 'One unused recovery code',
});

export const LoginBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 320 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
    otp: Type.Optional(Otp),
    recoveryCode: Type.Optional(RecoveryCodeInput),
  },
  { additionalProperties: false },
);

export const UserSummary = Type.Object({
  id: Uuid,
  accountId: Uuid,
  email: Type.String(),
  name: Type.String(),
  locale: Type.String(),
  twoFactorEnabled: Type.Boolean(),
  permissions: Type.Array(Type.String()),
});

export const LoginReply = Type.Object({ token: Type.String(), expiresAt: Timestamp, user: UserSummary });

/** The console login answers without the token: it travels only in the HttpOnly cookie. */
export const ConsoleLoginReply = Type.Object({ expiresAt: Timestamp, user: UserSummary });

export const CurrentUser = Type.Object({
  ...UserSummary.properties,
  accountTitle: Type.String(),
  mandatoryTwoFactor: Type.Boolean({ description: "Whether the user's account requires 2FA" }),
  accountTimeZone: Type.String({
    description: "The account's IANA time zone; the console shows times in it",
  }),
  uiSettings: Type.Record(Type.String(), Type.Unknown(), {
    description:
      "The account's effective UI settings: colorTheme, systemUiTheme, systemFonts and mapStyleUrl come from the nearest account that sets them, the account itself first (the console follows them)",
  }),
});

export const SessionReply = Type.Object({
  authenticated: Type.Boolean({
    description: 'Whether the request carries a valid session (cookie or bearer token)',
  }),
  user: Type.Optional(CurrentUser),
});

export const EnrolmentReply = Type.Object({
  secret: Type.String({ description: 'Base32 TOTP seed, for manual entry' }),
  otpauthUrl: Type.String(),
  qrCode: Type.String({ description: 'PNG data URL of otpauthUrl' }),
});

export const ActivateBody = Type.Object({ otp: Otp }, { additionalProperties: false });

export const ActivateReply = Type.Object({
  recoveryCodes: Type.Array(Type.String(), { description: 'Shown this once; each allows one login' }),
});

export const DeactivateBody = Type.Object(
  { otp: Type.Optional(Otp), recoveryCode: Type.Optional(RecoveryCodeInput) },
  { additionalProperties: false, description: 'A current code (or an unused recovery code)' },
);

export function userSummary(user: User, permissions: string[]) {
  return {
    id: user.id,
    accountId: user.account.id,
    email: user.email,
    name: user.name,
    locale: user.locale,
    twoFactorEnabled: user.totpEnabled,
    permissions,
  };
}

export const LOGIN_ERRORS_TEXT =
  '401 INVALID_CREDENTIALS (unknown user and wrong password alike); 401 TWO_FACTOR_REQUIRED (send otp or ' +
  'recoveryCode); 401 INVALID_TWO_FACTOR_CODE (wrong or already used code); 403 TWO_FACTOR_SETUP_REQUIRED with ' +
  '`error.details[0].setupToken` (account requires 2FA: use it as bearer token on the 2FA enrolment routes, ' +
  'valid 15 min); 429 LOGIN_THROTTLED with Retry-After (too many failures for this e-mail or client).';
