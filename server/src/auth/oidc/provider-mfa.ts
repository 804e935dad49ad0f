/**
 * Whether a provider's `amr` claim (RFC 8176 method references) reports a multi-factor login:
 * `mfa` itself, or a knowledge factor together with a possession or inherence factor (Keycloak,
 * for one, reports `["pwd", "otp"]`). Only consulted when the account trusts the provider's MFA.
 */
const KNOWLEDGE = new Set(['pwd', 'pin', 'kba']);
const POSSESSION_OR_INHERENCE = new Set([
  'otp',
  'hwk',
  'swk',
  'sc',
  'sms',
  'tel',
  'pop',
  'fpt',
  'face',
  'iris',
  'retina',
  'vbm',
]);

export function claimsMultiFactor(amr: unknown): boolean {
  if (!Array.isArray(amr)) return false;
  const methods = new Set(amr.filter((m): m is string => typeof m === 'string').map((m) => m.toLowerCase()));
  if (methods.has('mfa')) return true;
  return (
    [...methods].some((m) => KNOWLEDGE.has(m)) && [...methods].some((m) => POSSESSION_OR_INHERENCE.has(m))
  );
}
