import http from 'node:http';
import type net from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import { StartupError } from '../db/startup-error.js';
import type { Lifecycle } from '../lifecycle.js';

/**
 * `STELLWERK_HTTP_REDIRECT_PORT`: plain HTTP that answers everything with 308 to the same path over
 * HTTPS (308 keeps the method, so a misaddressed API call is repeated over TLS rather than turned
 * into a GET). Nothing is served over it, not even `/health`.
 */
export class HttpsRedirect implements Lifecycle {
  readonly name = 'https-redirect';
  private server: http.Server | undefined;
  /** The port actually bound (0 in the configuration picks one). */
  port: number | undefined;

  constructor(
    private readonly options: {
      host: string;
      port: number;
      /** The HTTPS port the server listens on (known once it listens). */
      httpsPort: () => number;
      publicUrl: string;
      log: FastifyBaseLogger;
    },
  ) {}

  async start(): Promise<void> {
    const { host, port, log } = this.options;
    const server = http.createServer((request, response) => {
      const location = redirectLocation(
        request.headers.host,
        request.url,
        this.options.httpsPort(),
        this.options.publicUrl,
      );
      if (!location) {
        response.writeHead(400, { 'content-type': 'text/plain; charset=utf-8' }).end('Bad Host header\n');
        return;
      }
      response
        .writeHead(308, { location, 'content-type': 'text/plain; charset=utf-8' })
        .end(`Stellwerk is served over HTTPS: ${location}\n`);
    });
    this.server = server;
    this.port = await new Promise<number>((resolve, reject) => {
      server.once('error', (error: NodeJS.ErrnoException) =>
        reject(
          new StartupError(
            error.code === 'EADDRINUSE'
              ? `STELLWERK_HTTP_REDIRECT_PORT ${port} is already in use on ${host}`
              : error.code === 'EACCES'
                ? `STELLWERK_HTTP_REDIRECT_PORT ${port} needs privileges this user lacks (a port below 1024)`
                : `STELLWERK_HTTP_REDIRECT_PORT ${port}: ${error.message}`,
          ),
        ),
      );
      server.listen(port, host, () => resolve((server.address() as net.AddressInfo).port));
    });
    log.info(
      { httpRedirectPort: this.port },
      `redirecting http on port ${this.port} to https on port ${this.options.httpsPort()}`,
    );
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }
}

/**
 * Where a plain-HTTP request goes: the public URL's origin when the request named its host (it may
 * sit behind a port forward), else the host the client used, on the HTTPS port. Undefined for a
 * missing or malformed Host header.
 */
export function redirectLocation(
  hostHeader: string | undefined,
  requestUrl: string | undefined,
  httpsPort: number,
  publicUrl: string,
): string | undefined {
  if (!hostHeader) return undefined;
  let requested: URL;
  try {
    requested = new URL(`http://${hostHeader}`);
  } catch {
    return undefined;
  }
  // Only a bare host[:port]; anything else in the header (user info, a path) is refused.
  if (
    requested.username ||
    requested.password ||
    requested.pathname !== '/' ||
    requested.search ||
    requested.hash
  )
    return undefined;
  const path = requestUrl?.startsWith('/') ? requestUrl : '/';
  const pub = new URL(publicUrl);
  if (pub.protocol === 'https:' && pub.hostname === requested.hostname) return `${pub.origin}${path}`;
  const target = new URL(`https://${requested.hostname}`);
  target.port = String(httpsPort);
  return `${target.origin}${path}`;
}
