import { createPrivateKey, X509Certificate } from 'node:crypto';
import https from 'node:https';
import type net from 'node:net';
import { describe, expect, it } from 'vitest';
import { createSelfSignedCertificate } from './self-signed.js';

const DAY = 86_400_000;
const now = new Date('2026-11-22T10:00:00Z');

const make = (names: string[], notAfter = new Date(now.getTime() + 825 * DAY)) =>
  createSelfSignedCertificate({ names, commonName: 'Stellwerk test-host', notBefore: now, notAfter });

/**
 * GET / over TLS to 127.0.0.1, trusting only the certificate, which must hold `servername` (or the
 * address when none is given); resolves with the body or rejects with the TLS error.
 */
async function fetchPinned(names: string[], servername?: string): Promise<string> {
  const { certPem, keyPem } = make(names);
  const server = https.createServer({ cert: certPem, key: keyPem }, (_q, r) => r.end('pinned'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  try {
    return await new Promise<string>((resolve, reject) => {
      const request = https.get(
        { host: '127.0.0.1', port, ca: certPem, ...(servername ? { servername } : {}) },
        (response) => {
          let body = '';
          response.on('data', (chunk: Buffer) => (body += chunk.toString()));
          response.on('end', () => resolve(body));
        },
      );
      request.on('error', reject);
    });
  } finally {
    server.close();
  }
}

describe('self-signed certificate', () => {
  it('is a v3 end-entity certificate for the given names, signed by its own key', () => {
    const { certPem, keyPem } = make(['localhost', '127.0.0.1', '::1', 'fd00::a:1', 'plant-srv.local']);
    const x509 = new X509Certificate(certPem);
    expect(x509.subjectAltName).toBe(
      'DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1, IP Address:FD00:0:0:0:0:0:A:1, DNS:plant-srv.local',
    );
    expect(x509.subject).toBe('O=Stellwerk\nCN=Stellwerk test-host');
    expect(x509.issuer).toBe(x509.subject);
    expect(x509.ca).toBe(false);
    expect(x509.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
    expect(x509.validFromDate).toEqual(now);
    expect(x509.validToDate).toEqual(new Date(now.getTime() + 825 * DAY));
    expect(x509.verify(x509.publicKey)).toBe(true);
    expect(x509.checkPrivateKey(createPrivateKey(keyPem))).toBe(true);
    expect(x509.checkHost('plant-srv.local')).toBe('plant-srv.local');
    expect(x509.checkIP('::1')).toBe('::1');
    expect(x509.checkHost('other.local')).toBeUndefined();
  });

  it('writes dates from 2050 on as GeneralizedTime', () => {
    const x509 = new X509Certificate(make(['localhost'], new Date('2051-03-04T05:06:07Z')).certPem);
    expect(x509.validToDate).toEqual(new Date('2051-03-04T05:06:07Z'));
  });

  it('gets a fresh key and serial number each time', () => {
    const [a, b] = [make(['localhost']), make(['localhost'])];
    expect(new X509Certificate(a.certPem).serialNumber).not.toBe(new X509Certificate(b.certPem).serialNumber);
    expect(a.keyPem).not.toBe(b.keyPem);
  });

  it('serves TLS to a client that pins it, by address and by name', async () => {
    expect(await fetchPinned(['localhost', '127.0.0.1'])).toBe('pinned');
    expect(await fetchPinned(['localhost', '127.0.0.1'], 'localhost')).toBe('pinned');
  });

  it('is refused by a pinning client for a name it does not hold', async () => {
    await expect(fetchPinned(['localhost'])).rejects.toThrow(/IP: 127\.0\.0\.1 is not in the cert/);
  });
});
