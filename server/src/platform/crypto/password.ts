import { hash, verify, type Options } from '@node-rs/argon2';

/** OWASP 2024 minimum for argon2id: m=19 MiB, t=2, p=1. We use a little more memory. */
// `algorithm: 2` is Argon2id; the package exports it as an ambient const enum we cannot import.
const OPTIONS: Options = {
  algorithm: 2,
  memoryCost: 19_456,
  timeCost: 2,
  parallelism: 1,
};

export const hashSecret = (secret: string): Promise<string> => hash(secret, OPTIONS);

export async function verifySecret(stored: string, candidate: string): Promise<boolean> {
  try {
    return await verify(stored, candidate);
  } catch {
    return false;
  }
}

let dummyHash: Promise<string> | undefined;

/** Spends the same time as a real check, so unknown users and wrong passwords look alike. */
export async function verifyAgainstDummy(candidate: string): Promise<false> {
  dummyHash ??= hashSecret('stellwerk-timing-equaliser');
  await verifySecret(await dummyHash, candidate);
  return false;
}
