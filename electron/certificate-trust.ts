import { leafCertificate } from './server-https.js';

/**
 * Whether the window may accept a certificate Chromium refused (self-signed, or issued for a name
 * other than 127.0.0.1): only on the app's own server's origin, and only when the presented
 * certificate is byte for byte the one in the server's certificate file. Everything else keeps
 * Chromium's refusal, so a page on another origin, or a different program on the port, is never
 * trusted. Pure Node: Electron's `Certificate.data` is PEM, compared here as DER.
 */
export interface CertificateErrorInput {
  /** The URL Chromium was loading. */
  url: string;
  /** The app's server URL (DesktopSettings.url). */
  appUrl: string;
  /** The leaf certificate Chromium was shown, as PEM. */
  presentedPem: string;
  /** The server's certificate file's text; undefined when the app has none (HTTP, or a remote server). */
  trustedPem: string | undefined;
}

/** The TLS origin of a page or of the console's live WebSocket (wss: on the same host and port). */
const httpsOrigin = (url: string): string | undefined => {
  try {
    const parsed = new URL(url);
    if (parsed.protocol === 'wss:') parsed.protocol = 'https:';
    return parsed.protocol === 'https:' ? parsed.origin : undefined;
  } catch {
    return undefined;
  }
};

export function acceptCertificate(input: CertificateErrorInput): boolean {
  const origin = httpsOrigin(input.url);
  if (origin === undefined || origin !== httpsOrigin(input.appUrl)) return false;
  const trusted = leafCertificate(input.trustedPem);
  const presented = leafCertificate(input.presentedPem);
  return trusted !== undefined && presented !== undefined && trusted.raw.equals(presented.raw);
}
