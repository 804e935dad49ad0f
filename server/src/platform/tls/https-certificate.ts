import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../../config.js';
import { StartupError } from '../db/startup-error.js';
import { certificateCovers, certificateFacts, type CertificateFacts } from './certificate-facts.js';
import { createSelfSignedCertificate } from './self-signed.js';

/**
 * The certificate the HTTP port serves with HTTPS on: the operator's PEM files
 * (`STELLWERK_HTTPS=on`), or one this server makes and keeps in `<data dir>/tls/`
 * (`STELLWERK_HTTPS=self-signed`). Its SHA-256 fingerprint is logged at every start, so that a
 * client pinning it can be checked against the log.
 */

export interface HttpsCertificate {
  cert: Buffer;
  key: Buffer;
  facts: CertificateFacts;
  source: 'files' | 'self-signed';
  certFile: string;
  keyFile: string;
}

/** Renewal (self-signed) and warnings (own files) start this many days before expiry. */
export const RENEW_DAYS = 30;
/** The longest validity Apple platforms accept for a server certificate a user trusts (825 days). */
const SELF_SIGNED_DAYS = 825;

export function selfSignedFiles(dataDir: string): { dir: string; cert: string; key: string } {
  const dir = path.join(dataDir, 'tls');
  return { dir, cert: path.join(dir, 'self-signed-cert.pem'), key: path.join(dir, 'self-signed-key.pem') };
}

/** Reads (or for `self-signed` makes) the certificate; undefined when HTTPS is off. */
export async function loadHttpsCertificate(
  config: Config,
  log: FastifyBaseLogger,
  now = new Date(),
): Promise<HttpsCertificate | undefined> {
  if (config.https === 'off') return undefined;
  const certificate =
    config.https === 'self-signed'
      ? await ensureSelfSigned(config, log, now)
      : await readOwnCertificate(config.httpsCert!, config.httpsKey!, now);
  logCertificate(certificate, config, log);
  return certificate;
}

/** The operator's files; a certificate that cannot serve at all stops the start. */
export async function readOwnCertificate(
  certFile: string,
  keyFile: string,
  now: Date,
): Promise<HttpsCertificate> {
  const [cert, key] = await Promise.all([
    readPem(certFile, 'STELLWERK_HTTPS_CERT'),
    readPem(keyFile, 'STELLWERK_HTTPS_KEY'),
  ]);
  let facts: CertificateFacts;
  try {
    facts = certificateFacts(cert, key, now);
  } catch (error) {
    throw new StartupError(`STELLWERK_HTTPS_CERT / STELLWERK_HTTPS_KEY: ${(error as Error).message}`);
  }
  if (!facts.keyMatches) {
    throw new StartupError(
      `STELLWERK_HTTPS_KEY ${keyFile} is not the private key of the certificate in STELLWERK_HTTPS_CERT ${certFile}`,
    );
  }
  return { cert, key, facts, source: 'files', certFile, keyFile };
}

async function readPem(file: string, variable: string): Promise<Buffer> {
  try {
    return await fs.readFile(file);
  } catch (error) {
    throw new StartupError(`${variable} ${file} cannot be read (${(error as NodeJS.ErrnoException).code})`);
  }
}

/**
 * The names the self-signed certificate must hold to be kept: how this machine is reached
 * (localhost, loopback, its host name, the public URL's host, a specific bind address).
 */
export function requiredNames(config: Config): string[] {
  const names = ['localhost', '127.0.0.1', '::1', os.hostname().toLowerCase()];
  names.push(new URL(config.publicUrl).hostname.replace(/^\[(.*)\]$/, '$1'));
  if (net.isIP(config.httpHost) && !['0.0.0.0', '::'].includes(config.httpHost)) names.push(config.httpHost);
  return [...new Set(names.filter(usableName))];
}

/** Added when a certificate is made, not required later: addresses come and go with DHCP. */
function interfaceAddresses(): string[] {
  return Object.values(os.networkInterfaces())
    .flat()
    .filter((a) => a && !a.internal && !a.address.toLowerCase().startsWith('fe80:'))
    .map((a) => a!.address);
}

const usableName = (name: string) => net.isIP(name) !== 0 || /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/i.test(name);

async function ensureSelfSigned(
  config: Config,
  log: FastifyBaseLogger,
  now: Date,
): Promise<HttpsCertificate> {
  const files = selfSignedFiles(config.dataDir);
  const required = requiredNames(config);
  const existing = await readExisting(files, now);
  const reason = renewalReason(existing, required);
  if (existing && !reason) return existing;

  const made = createSelfSignedCertificate({
    names: [...new Set([...required, ...interfaceAddresses()])],
    commonName: `Stellwerk ${os.hostname()}`,
    // An hour back, so that a client whose clock is a little behind accepts it at once.
    notBefore: new Date(now.getTime() - 3_600_000),
    notAfter: new Date(now.getTime() + SELF_SIGNED_DAYS * 86_400_000),
  });
  try {
    await fs.mkdir(files.dir, { recursive: true, mode: 0o700 });
    await writePrivate(files.key, made.keyPem);
    await writePrivate(files.cert, made.certPem);
  } catch (error) {
    throw new StartupError(
      `STELLWERK_DATA_DIR: cannot write the self-signed certificate to ${files.dir} (${(error as NodeJS.ErrnoException).code})`,
    );
  }
  const cert = Buffer.from(made.certPem);
  const key = Buffer.from(made.keyPem);
  const certificate: HttpsCertificate = {
    cert,
    key,
    facts: certificateFacts(cert, key, now),
    source: 'self-signed',
    certFile: files.cert,
    keyFile: files.key,
  };
  (existing ? log.warn.bind(log) : log.info.bind(log))(
    { certFile: files.cert, reason: reason ?? 'first start', names: certificate.facts.names },
    existing
      ? `made a new self-signed HTTPS certificate (${reason}); clients that pinned the old one need the new fingerprint`
      : 'made a self-signed HTTPS certificate',
  );
  return certificate;
}

async function readExisting(
  files: { cert: string; key: string },
  now: Date,
): Promise<HttpsCertificate | undefined> {
  try {
    const [cert, key] = await Promise.all([fs.readFile(files.cert), fs.readFile(files.key)]);
    const facts = certificateFacts(cert, key, now);
    return { cert, key, facts, source: 'self-signed', certFile: files.cert, keyFile: files.key };
  } catch {
    // Missing or damaged: made afresh.
    return undefined;
  }
}

/** Why a kept self-signed certificate has to be replaced; undefined while it serves. */
export function renewalReason(
  existing: HttpsCertificate | undefined,
  required: string[],
): string | undefined {
  if (!existing) return 'no usable certificate';
  const { facts } = existing;
  if (!facts.keyMatches) return 'the key does not match the certificate';
  if (facts.daysLeft < RENEW_DAYS) return `it expires in ${facts.daysLeft} days`;
  const missing = required.filter((name) => !certificateCovers(facts.x509, name));
  if (missing.length) return `it is not valid for ${missing.join(', ')}`;
  return undefined;
}

/** Written to a new file and renamed over the old one: a crash never leaves half a key. */
async function writePrivate(file: string, content: string): Promise<void> {
  const temporary = `${file}.${process.pid}.tmp`;
  await fs.writeFile(temporary, content, { mode: 0o600 });
  await fs.rename(temporary, file);
}

function logCertificate(certificate: HttpsCertificate, config: Config, log: FastifyBaseLogger): void {
  const { facts } = certificate;
  const summary = {
    source: certificate.source,
    certFile: certificate.certFile,
    subject: facts.subject,
    names: facts.names,
    validTo: facts.validTo.toISOString(),
    fingerprint256: facts.fingerprint256,
  };
  log.info({ httpsCertificate: summary }, `HTTPS certificate SHA-256 fingerprint ${facts.fingerprint256}`);
  if (facts.daysLeft < 0) {
    log.error({ httpsCertificate: summary }, 'the HTTPS certificate has expired; clients will refuse it');
  } else if (facts.daysLeft < RENEW_DAYS) {
    log.warn({ httpsCertificate: summary }, `the HTTPS certificate expires in ${facts.daysLeft} days`);
  }
  const host = new URL(config.publicUrl).hostname;
  if (!certificateCovers(facts.x509, host)) {
    log.warn(
      { httpsCertificate: summary, publicUrl: config.publicUrl },
      `the HTTPS certificate is not valid for ${host} (STELLWERK_PUBLIC_URL)`,
    );
  }
}
