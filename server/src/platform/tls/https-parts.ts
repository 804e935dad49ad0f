import type tls from 'node:tls';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../../config.js';
import type { App } from '../../context.js';
import { HttpsRedirect } from '../http/https-redirect.js';
import type { Lifecycle } from '../lifecycle.js';
import { readOwnCertificate } from './https-certificate.js';

/**
 * What runs beside an HTTPS port, started after it: the plain-HTTP redirect listener
 * (`STELLWERK_HTTP_REDIRECT_PORT`), and with the operator's own files a reload on SIGHUP, so that a
 * renewed certificate (certbot, an internal CA) is served without a restart. Open connections keep
 * the certificate they started with.
 */
export function httpsParts(config: Config, app: App, log: FastifyBaseLogger): Lifecycle[] {
  const parts: Lifecycle[] = [];
  if (config.https === 'on') parts.push(certificateReload(config, app.server as unknown as tls.Server, log));
  if (config.httpRedirectPort !== undefined) {
    parts.push(
      new HttpsRedirect({
        host: config.httpHost,
        port: config.httpRedirectPort,
        httpsPort: () => {
          const address = app.server.address();
          return typeof address === 'object' && address ? address.port : config.httpPort;
        },
        publicUrl: config.publicUrl,
        log,
      }),
    );
  }
  return parts;
}

/** Re-reads the operator's files on SIGHUP; a bad file is logged and the served certificate kept. */
export function certificateReload(config: Config, server: tls.Server, log: FastifyBaseLogger): Lifecycle {
  const reload = () => {
    readOwnCertificate(config.httpsCert!, config.httpsKey!, new Date())
      .then(({ cert, key, facts }) => {
        server.setSecureContext({ cert, key });
        log.info(
          {
            httpsCertificate: { fingerprint256: facts.fingerprint256, validTo: facts.validTo.toISOString() },
          },
          `HTTPS certificate reloaded; SHA-256 fingerprint ${facts.fingerprint256}`,
        );
      })
      .catch((error: unknown) =>
        log.error({ err: error }, 'HTTPS certificate not reloaded; the previous one is still served'),
      );
  };
  return {
    name: 'https-certificate-reload',
    start: async () => void process.on('SIGHUP', reload),
    stop: async () => void process.off('SIGHUP', reload),
  };
}
