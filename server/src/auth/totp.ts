import { generate, generateSecret, generateURI, verify } from 'otplib';

/**
 * RFC 6238 TOTP as authenticator apps expect it: SHA-1, 30-second steps, 6 digits by default.
 * The server and the tests use only this module, so the RFC test vectors check the real code.
 */

export const TOTP_PERIOD_SECONDS = 30;
export const TOTP_DIGITS = 6;
export const TOTP_ISSUER = 'Stellwerk';
/** One step either side: clocks of phones drift, and typing a code takes time. */
const DRIFT_STEPS = 1;

/** A key as authenticator apps take it (Base32, 160 bits), or raw bytes (RFC vectors). */
export type TotpSecret = string | Uint8Array;

export interface TotpOptions {
  digits?: number;
}

const toEpoch = (at: Date): number => Math.floor(at.getTime() / 1000);

export const totpStep = (at: Date): number => Math.floor(toEpoch(at) / TOTP_PERIOD_SECONDS);

/** A new random Base32 seed of 20 bytes (the RFC 4226 recommendation). */
export const newTotpSecret = (): string => generateSecret({ length: 20 });

export function totpCode(secret: TotpSecret, at: Date, options: TotpOptions = {}): Promise<string> {
  return generate({
    secret,
    epoch: toEpoch(at),
    period: TOTP_PERIOD_SECONDS,
    digits: options.digits ?? TOTP_DIGITS,
    algorithm: 'sha1',
  });
}

/**
 * The time step the code belongs to, or null when it matches none within the drift window or
 * belongs to a step at or before `afterStep` (already used: each code is good once).
 */
export async function matchTotp(
  secret: TotpSecret,
  code: string,
  at: Date,
  afterStep: number | null = null,
  options: TotpOptions = {},
): Promise<number | null> {
  const digits = options.digits ?? TOTP_DIGITS;
  if (!new RegExp(`^[0-9]{${digits}}$`).test(code)) return null;
  const result = await verify({
    secret,
    token: code,
    epoch: toEpoch(at),
    period: TOTP_PERIOD_SECONDS,
    digits,
    algorithm: 'sha1',
    epochTolerance: DRIFT_STEPS * TOTP_PERIOD_SECONDS,
  });
  // The functional API types the HOTP result too; a TOTP match always carries its time step.
  if (!result.valid || !('timeStep' in result)) return null;
  // Checked here rather than with otplib's afterTimeStep, which throws when a stored step lies ahead of the clock.
  if (afterStep !== null && result.timeStep <= afterStep) return null;
  return result.timeStep;
}

/** The otpauth:// URL an authenticator app scans. */
export const totpUrl = (secret: string, account: string): string =>
  generateURI({
    issuer: TOTP_ISSUER,
    label: account,
    secret,
    algorithm: 'sha1',
    digits: TOTP_DIGITS,
    period: TOTP_PERIOD_SECONDS,
  });
