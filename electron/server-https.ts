import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';

/**
 * HTTPS for the server the app starts: whether it serves HTTPS, which certificate file it
 * serves, and a health request that trusts that one certificate and nothing else. Pure Node, no
 * Electron; the desktop build does not compile server sources, so the server's rule is mirrored
 * here and a unit test holds the two together.
 */

export type ServerHttpsMode = 'off' | 'on' | 'self-signed';
const MODES: readonly string[] = ['off', 'on', 'self-signed'];

/**
 * The server's `STELLWERK_HTTPS` as server/src/config.ts and config-variables.http.ts decide it:
 * an environment variable that is set (even to '') hides the file's line; an explicit mode is
 * trimmed and lower-cased; without one a named certificate means `on`. Undefined: the server
 * refuses the value and will not start.
 */
export function serverHttpsMode(
  env: NodeJS.ProcessEnv,
  conf: Record<string, string>,
): ServerHttpsMode | undefined {
  const value = (name: string) => (env[name] !== undefined ? env[name] : conf[name]);
  const raw = value('STELLWERK_HTTPS');
  if (raw !== undefined) {
    const mode = raw.trim().toLowerCase();
    return MODES.includes(mode) ? (mode as ServerHttpsMode) : undefined;
  }
  return value('STELLWERK_HTTPS_CERT')?.trim() ? 'on' : 'off';
}

export interface CertificateFileInput {
  mode: ServerHttpsMode | undefined;
  env: NodeJS.ProcessEnv;
  conf: Record<string, string>;
  /** The server's STELLWERK_DATA_DIR as passed to it (relative paths resolve against `cwd`). */
  dataDir: string | undefined;
  /** The server process's working directory: the server resolves relative paths against it. */
  cwd: string;
}

/**
 * The PEM file the server serves: its self-signed certificate in `<data dir>/tls/` (as
 * server/src/platform/tls/https-certificate.ts `selfSignedFiles`), or `STELLWERK_HTTPS_CERT`.
 */
export function serverCertificateFile(input: CertificateFileInput): string | undefined {
  const { mode, env, conf, dataDir, cwd } = input;
  if (mode === 'self-signed')
    return dataDir?.trim() ? path.resolve(cwd, dataDir.trim(), 'tls', 'self-signed-cert.pem') : undefined;
  if (mode !== 'on') return undefined;
  const cert = (
    env.STELLWERK_HTTPS_CERT !== undefined ? env.STELLWERK_HTTPS_CERT : conf.STELLWERK_HTTPS_CERT
  )?.trim();
  return cert ? path.resolve(cwd, cert) : undefined;
}

/** The file's text, or undefined while it does not exist yet (a first start makes it). */
export function readCertificateFile(file: string | undefined): string | undefined {
  if (!file) return undefined;
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** The first certificate of a PEM text (the server's own; intermediates follow it), or undefined. */
export function leafCertificate(pem: string | undefined): X509Certificate | undefined {
  if (!pem) return undefined;
  try {
    return new X509Certificate(pem);
  } catch {
    return undefined;
  }
}

/**
 * TLS options that accept exactly the certificate in `pem`: it is the only trust anchor (partial
 * chains allowed, so an operator's CA-issued certificate anchors itself without its root), and the
 * peer's certificate must be that very certificate. Host names are not checked: the app reaches
 * its server on 127.0.0.1, which an operator's certificate rarely names, and the byte-for-byte
 * match is stronger than a name.
 */
export function pinnedTlsOptions(pem: string): https.RequestOptions | undefined {
  const leaf = leafCertificate(pem);
  if (!leaf) return undefined;
  return {
    ca: pem,
    allowPartialTrustChain: true,
    checkServerIdentity: (_host, peer) =>
      peer.raw.equals(leaf.raw) ? undefined : new Error('not the certificate the server was given'),
  };
}

export interface HealthAnswer {
  status: number;
  body: string;
}

/** A /health answer is a few bytes; anything larger is not Stellwerk. */
const MAX_BODY = 64 * 1024;

/**
 * GET `url`; with `certFile` the request trusts that certificate only (read at every call: the
 * server makes or renews it at start). Rejects on any network, TLS or timeout error.
 */
export function getWithPinnedCertificate(
  url: string,
  timeoutMs: number,
  certFile: string | undefined,
): Promise<HealthAnswer> {
  const target = new URL(url);
  let tlsOptions: https.RequestOptions = {};
  if (target.protocol === 'https:' && certFile) {
    const pinned = pinnedTlsOptions(readCertificateFile(certFile) ?? '');
    if (!pinned) return Promise.reject(new Error(`no usable certificate in ${certFile} yet`));
    tlsOptions = pinned;
  }
  const client = target.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const request = client.get(
      target,
      { ...tlsOptions, signal: AbortSignal.timeout(timeoutMs) },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_BODY) request.destroy(new Error('answer too large'));
          else chunks.push(chunk);
        });
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
        response.on('error', reject);
      },
    );
    request.on('error', reject);
  });
}
