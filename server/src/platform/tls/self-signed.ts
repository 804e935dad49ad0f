import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import net from 'node:net';
import {
  bitString,
  boolean,
  explicit,
  implicit,
  objectIdentifier,
  octetString,
  sequence,
  set,
  time,
  unsignedInteger,
  utf8String,
} from './der.js';

/**
 * A self-signed X.509 v3 server certificate, written with node:crypto and a small DER writer
 * (der.ts): Node parses certificates but cannot make them, and the installed product must not need
 * `openssl`. ECDSA P-256 with SHA-256, which every TLS client in use accepts; an end-entity
 * certificate (CA false), as browsers expect of a server's own certificate.
 */

const OID = {
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  subjectKeyIdentifier: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  authorityKeyIdentifier: '2.5.29.35',
  extKeyUsage: '2.5.29.37',
  serverAuth: '1.3.6.1.5.5.7.3.1',
};

export interface SelfSignedOptions {
  /** Host names and IP addresses the certificate is valid for (subjectAltName). */
  names: string[];
  commonName: string;
  notBefore: Date;
  notAfter: Date;
}

export interface SelfSignedCertificate {
  certPem: string;
  keyPem: string;
}

export function createSelfSignedCertificate(options: SelfSignedOptions): SelfSignedCertificate {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  // RFC 7093 method 1: the leftmost 160 bits of the SHA-256 of the public key.
  const keyId = createHash('sha256').update(spki).digest().subarray(0, 20);
  const name = sequence(
    set(sequence(objectIdentifier(OID.organization), utf8String('Stellwerk'))),
    set(sequence(objectIdentifier(OID.commonName), utf8String(options.commonName))),
  );
  const algorithm = sequence(objectIdentifier(OID.ecdsaWithSha256));
  // 127 random bits: positive, and never needing a leading zero byte.
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x40;

  const tbs = sequence(
    explicit(0, unsignedInteger(Buffer.from([2]))), // v3
    unsignedInteger(serial),
    algorithm,
    name,
    sequence(time(options.notBefore), time(options.notAfter)),
    name,
    spki,
    explicit(
      3,
      sequence(
        extension(OID.basicConstraints, true, sequence()),
        // digitalSignature only: an ECDSA key signs the handshake, it never enciphers keys.
        extension(OID.keyUsage, true, bitString(Buffer.from([0x80]), 7)),
        extension(OID.extKeyUsage, false, sequence(objectIdentifier(OID.serverAuth))),
        extension(OID.subjectAltName, false, sequence(...options.names.map(generalName))),
        extension(OID.subjectKeyIdentifier, false, octetString(keyId)),
        extension(OID.authorityKeyIdentifier, false, sequence(implicit(0, keyId))),
      ),
    ),
  );
  const signature = sign('sha256', tbs, privateKey);
  const der = sequence(tbs, algorithm, bitString(signature));
  return {
    certPem: pem('CERTIFICATE', der),
    keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
  };
}

function extension(oid: string, critical: boolean, value: Buffer): Buffer {
  return sequence(objectIdentifier(oid), ...(critical ? [boolean(true)] : []), octetString(value));
}

/** dNSName [2] for names, iPAddress [7] (4 or 16 bytes) for addresses. */
function generalName(name: string): Buffer {
  const version = net.isIP(name);
  if (version === 0) return implicit(2, Buffer.from(name, 'ascii'));
  return implicit(7, version === 4 ? Buffer.from(name.split('.').map(Number)) : ipv6Bytes(name));
}

function ipv6Bytes(address: string): Buffer {
  const [head = '', tail] = address.split('::') as [string, string | undefined];
  const groups = (part: string) => (part ? part.split(':') : []);
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  // An embedded IPv4 tail (::ffff:1.2.3.4) counts as two groups.
  const expand = (list: string[]) =>
    list.flatMap((g) => {
      if (!g.includes('.')) return [g];
      const [a, b, c, d] = g.split('.').map(Number) as [number, number, number, number];
      return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
    });
  const l = expand(left);
  const r = expand(right);
  const all = [...l, ...Array<string>(8 - l.length - r.length).fill('0'), ...r];
  const bytes = Buffer.alloc(16);
  all.forEach((g, i) => bytes.writeUInt16BE(parseInt(g, 16), i * 2));
  return bytes;
}

function pem(label: string, der: Buffer): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}
