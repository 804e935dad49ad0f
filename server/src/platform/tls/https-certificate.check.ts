import fs from 'node:fs/promises';
import type { DoctorCheck, DoctorFinding } from '../../cli/doctor-check.js';
import type { Config } from '../../config.js';
import { certificateCovers, certificateFacts } from './certificate-facts.js';
import { RENEW_DAYS, selfSignedFiles } from './https-certificate.js';

const CHECK = 'tls-certificate';

/**
 * `stellwerk doctor`: the HTTPS certificate the HTTP port serves. Fails when it cannot be read, its
 * key does not match, or it is expired or not yet valid; warns within 30 days of expiry, when it does
 * not name the public URL's host, and when its key file is readable by others.
 */
export const httpsCertificateCheck: DoctorCheck = {
  name: CHECK,
  run: (config) => inspect(config, new Date()),
};

export async function inspect(config: Config, now: Date): Promise<DoctorFinding> {
  if (config.https === 'off') {
    return {
      check: CHECK,
      status: 'ok',
      message:
        config.trustProxy.length > 0
          ? 'HTTPS is off here; TLS is left to the reverse proxy (STELLWERK_TRUST_PROXY)'
          : 'HTTPS is off (STELLWERK_HTTPS); the HTTP port serves plain HTTP',
      details: { https: 'off' },
    };
  }
  const selfSigned = config.https === 'self-signed';
  const files = selfSigned
    ? selfSignedFiles(config.dataDir)
    : { cert: config.httpsCert!, key: config.httpsKey! };
  const certVariable = selfSigned ? 'STELLWERK_HTTPS=self-signed' : 'STELLWERK_HTTPS_CERT';
  const keyVariable = selfSigned ? 'STELLWERK_HTTPS=self-signed' : 'STELLWERK_HTTPS_KEY';
  const fail = (message: string, details: Record<string, unknown> = {}): DoctorFinding => ({
    check: CHECK,
    status: 'fail',
    message,
    details: { https: config.https, certFile: files.cert, keyFile: files.key, ...details },
  });

  const read = async (file: string) => fs.readFile(file).catch((e: NodeJS.ErrnoException) => e);
  const [cert, key] = await Promise.all([read(files.cert), read(files.key)]);
  if (selfSigned && cert instanceof Error && cert.code === 'ENOENT') {
    return {
      check: CHECK,
      status: 'ok',
      message: `no self-signed certificate yet; the next start makes one in ${selfSignedFiles(config.dataDir).dir}`,
      details: { https: config.https, certFile: files.cert },
    };
  }
  if (cert instanceof Error) return fail(`${certVariable}: ${files.cert} cannot be read (${cert.code})`);
  if (key instanceof Error) return fail(`${keyVariable}: ${files.key} cannot be read (${key.code})`);

  let facts;
  try {
    facts = certificateFacts(cert, key, now);
  } catch (error) {
    return fail(`${certVariable} / ${keyVariable}: ${(error as Error).message}`);
  }
  const details = {
    https: config.https,
    certFile: files.cert,
    keyFile: files.key,
    subject: facts.subject,
    names: facts.names,
    validFrom: facts.validFrom.toISOString(),
    validTo: facts.validTo.toISOString(),
    daysLeft: facts.daysLeft,
    selfSigned: facts.selfSigned,
    fingerprint256: facts.fingerprint256,
  };
  const renewal = selfSigned
    ? 'restart Stellwerk to make a new one'
    : `renew it and reload Stellwerk (SIGHUP or restart)`;
  if (!facts.keyMatches)
    return fail(`${files.key} is not the private key of the certificate ${files.cert}`, details);
  if (facts.validFrom > now)
    return fail(`the certificate is not valid before ${details.validFrom}; check the clock`, details);
  if (now > facts.validTo) return fail(`the certificate expired on ${details.validTo}; ${renewal}`, details);

  const warnings: string[] = [];
  if (facts.daysLeft < RENEW_DAYS) {
    warnings.push(
      selfSigned
        ? `it expires in ${facts.daysLeft} days and is renewed at the next start`
        : `it expires in ${facts.daysLeft} days; ${renewal}`,
    );
  }
  const host = new URL(config.publicUrl).hostname;
  if (!certificateCovers(facts.x509, host)) {
    warnings.push(
      `it is not valid for ${host} (STELLWERK_PUBLIC_URL); clients reaching that name will refuse it`,
    );
  }
  // Windows has no such mode bits; its ACLs are the installer's business.
  if (process.platform !== 'win32' && ((await fs.stat(files.key)).mode & 0o077) !== 0) {
    warnings.push(`its key file ${files.key} is open to group or others (chmod 600)`);
  }
  const summary = `valid until ${details.validTo} (${facts.daysLeft} days), SHA-256 ${facts.fingerprint256}`;
  return warnings.length
    ? {
        check: CHECK,
        status: 'warn',
        message: `HTTPS certificate ${summary}: ${warnings.join('; ')}`,
        details,
      }
    : { check: CHECK, status: 'ok', message: `HTTPS certificate ${summary}`, details };
}
