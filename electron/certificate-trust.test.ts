import { describe, expect, it } from 'vitest';
import { createSelfSignedCertificate } from '../server/src/platform/tls/self-signed.js';
import { acceptCertificate } from './certificate-trust.js';

/** Real certificates from the server's own generator, as `STELLWERK_HTTPS=self-signed` makes them. */
const certificate = () =>
  createSelfSignedCertificate({
    names: ['localhost', '127.0.0.1', '::1'],
    commonName: 'Stellwerk test',
    notBefore: new Date(Date.now() - 3_600_000),
    notAfter: new Date(Date.now() + 86_400_000),
  }).certPem;

const own = certificate();
const other = certificate();
const appUrl = 'https://127.0.0.1:8443';

/** The same DER in another PEM layout (76-character lines, CRLF), as another encoder may write it. */
const rewrapped = (pem: string) => {
  const base64 = pem.replace(/-----[^-]+-----|\s/g, '');
  const lines = base64.match(/.{1,76}/g) ?? [];
  return ['-----BEGIN CERTIFICATE-----', ...lines, '-----END CERTIFICATE-----', ''].join('\r\n');
};

describe('acceptCertificate', () => {
  it("accepts the server's own certificate on the app's own origin, whatever the PEM layout", () => {
    expect(acceptCertificate({ url: `${appUrl}/`, appUrl, presentedPem: own, trustedPem: own })).toBe(true);
    expect(
      acceptCertificate({ url: `${appUrl}/live?x=1`, appUrl, presentedPem: rewrapped(own), trustedPem: own }),
    ).toBe(true);
    const live = 'wss://127.0.0.1:8443/live';
    expect(acceptCertificate({ url: live, appUrl, presentedPem: own, trustedPem: own })).toBe(true);
  });

  it('refuses a different certificate on the own origin', () => {
    expect(acceptCertificate({ url: `${appUrl}/`, appUrl, presentedPem: other, trustedPem: own })).toBe(
      false,
    );
  });

  it("refuses the server's certificate on any other origin", () => {
    for (const url of [
      'https://127.0.0.1:9443/',
      'https://localhost:8443/',
      'https://evil.example.com/',
      'http://127.0.0.1:8443/',
      'wss://127.0.0.1:9443/live',
      'ws://127.0.0.1:8443/live',
      'not a url',
    ]) {
      expect(acceptCertificate({ url, appUrl, presentedPem: own, trustedPem: own }), url).toBe(false);
    }
  });

  it('refuses everything when the app has no certificate or serves plain HTTP', () => {
    expect(acceptCertificate({ url: `${appUrl}/`, appUrl, presentedPem: own, trustedPem: undefined })).toBe(
      false,
    );
    expect(acceptCertificate({ url: `${appUrl}/`, appUrl, presentedPem: own, trustedPem: 'garbage' })).toBe(
      false,
    );
    expect(acceptCertificate({ url: `${appUrl}/`, appUrl, presentedPem: 'garbage', trustedPem: own })).toBe(
      false,
    );
    const httpApp = 'http://127.0.0.1:8443';
    expect(
      acceptCertificate({
        url: 'https://127.0.0.1:8443/',
        appUrl: httpApp,
        presentedPem: own,
        trustedPem: own,
      }),
    ).toBe(false);
  });

  it("trusts only the file's first certificate, not the intermediates after it", () => {
    const chain = own + other;
    expect(acceptCertificate({ url: `${appUrl}/`, appUrl, presentedPem: own, trustedPem: chain })).toBe(true);
    expect(acceptCertificate({ url: `${appUrl}/`, appUrl, presentedPem: other, trustedPem: chain })).toBe(
      false,
    );
  });
});
