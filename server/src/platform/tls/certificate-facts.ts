import { createPrivateKey, X509Certificate } from 'node:crypto';
import net from 'node:net';

/** What start-up, SIGHUP and `stellwerk doctor` need to know about a certificate and its key. */
export interface CertificateFacts {
  x509: X509Certificate;
  /** SHA-256 of the DER certificate, `AB:CD:…` (what browsers and `openssl x509 -fingerprint` show). */
  fingerprint256: string;
  subject: string;
  validFrom: Date;
  validTo: Date;
  /** Whole days until it expires; negative once expired. */
  daysLeft: number;
  selfSigned: boolean;
  /** Its subjectAltName entries (host names and addresses). */
  names: string[];
  keyMatches: boolean;
}

const DAY_MS = 86_400_000;

/** Throws with a readable reason when either PEM does not parse. */
export function certificateFacts(
  certPem: Buffer | string,
  keyPem: Buffer | string,
  now: Date,
): CertificateFacts {
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(certPem);
  } catch (error) {
    throw new Error(`not a PEM certificate (${(error as Error).message})`, { cause: error });
  }
  let keyMatches: boolean;
  try {
    keyMatches = x509.checkPrivateKey(createPrivateKey(keyPem));
  } catch (error) {
    throw new Error(`not an unencrypted PEM private key (${(error as Error).message})`, { cause: error });
  }
  const validTo = x509.validToDate;
  return {
    x509,
    fingerprint256: x509.fingerprint256,
    subject: x509.subject.replaceAll('\n', ', '),
    validFrom: x509.validFromDate,
    validTo,
    daysLeft: Math.floor((validTo.getTime() - now.getTime()) / DAY_MS),
    selfSigned: x509.issuer === x509.subject && x509.verify(x509.publicKey),
    names: (x509.subjectAltName ?? '')
      .split(', ')
      .map((entry) => entry.replace(/^(DNS|IP Address):/, ''))
      .filter(Boolean),
    keyMatches,
  };
}

/** Whether a client reaching the server as `host` (a name or an address) accepts the certificate's names. */
export function certificateCovers(x509: X509Certificate, host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  return net.isIP(bare) ? x509.checkIP(bare) !== undefined : x509.checkHost(bare) !== undefined;
}
