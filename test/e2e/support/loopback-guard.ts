import http from 'node:http';
import type net from 'node:net';
import type { BrowserContext, Page } from 'playwright-core';

/**
 * Records every network request of a Chromium run that is not for loopback, two ways:
 *
 * - Playwright's view: every request of every page and worker of the context (`context.on('request')`,
 *   which includes tiles, styles, fonts and fetches from MapLibre's workers) and every WebSocket.
 * - The network's view: Chromium is launched with `--proxy-server` pointing at a recording proxy
 *   here. Chromium sends loopback directly and everything else (HTTP, HTTPS and WebSocket, also
 *   what the browser itself fetches beside the page) to the proxy, which writes it down and refuses
 *   it. So a request cannot leave the machine, and the test still sees that it was attempted.
 *
 * Chromium itself calls a few Google services whatever page it shows (sign-in account list,
 * component updater at start; autofill and password checks when a page has a login form), seen
 * with a static page as well. Those hosts (CHROMIUM_SERVICE_HOSTS) are listed apart in
 * `browserServices` (blocked all the same); any other host at the proxy, and any non-loopback URL
 * a page, worker or WebSocket asked for, is in `foreign`. A console asking Google for fonts
 * would therefore still show up in `foreign`, through Playwright's view of the page.
 */
export interface LoopbackGuard {
  /** Chromium arguments that route every non-loopback request to the recording proxy. */
  chromiumArgs: string[];
  /** `source url` of every request for a host other than loopback (bar Chromium's own services). */
  foreign: string[];
  /** Chromium's own background calls that the proxy refused (not the console's doing). */
  browserServices: string[];
  /** Every host:port or URL the page requested (for the report: proof the recording sees traffic). */
  seen: Set<string>;
  watch(context: BrowserContext): void;
  close(): Promise<void>;
}

/** Google endpoints Chromium's own features call; see the comment at the top. */
export const CHROMIUM_SERVICE_HOSTS = new Set([
  'accounts.google.com',
  'clients2.google.com',
  'update.googleapis.com',
  'content-autofill.googleapis.com',
  'passwordsleakcheck-pa.googleapis.com',
  'optimizationguide-pa.googleapis.com',
  'safebrowsing.googleapis.com',
]);

const LOCAL_SCHEMES = new Set(['data:', 'blob:', 'about:', 'chrome:', 'chrome-error:', 'devtools:']);

export function isLoopback(url: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (LOCAL_SCHEMES.has(parsed.protocol)) return true;
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

export async function startLoopbackGuard(): Promise<LoopbackGuard> {
  const foreign: string[] = [];
  const browserServices: string[] = [];
  const seen = new Set<string>();
  /** `target` is an absolute URL (plain HTTP) or host:port (CONNECT). */
  const refused = (what: string, target: string) => {
    // CONNECT's host:port parses as a URL with the host as its scheme: tell them apart by '://'.
    const absolute = target.includes('://') && URL.canParse(target);
    const host = absolute ? new URL(target).hostname : target.replace(/:\d+$/, '');
    (CHROMIUM_SERVICE_HOSTS.has(host) ? browserServices : foreign).push(`proxy ${what} ${target}`);
  };
  const proxy = http.createServer((request, response) => {
    refused(request.method ?? 'GET', request.url ?? '');
    response.writeHead(502).end('blocked by the e2e loopback guard');
  });
  // HTTPS and wss:// arrive as CONNECT host:port; ws:// as an upgrade.
  proxy.on('connect', (request: http.IncomingMessage, socket: net.Socket) => {
    refused('CONNECT', request.url ?? '');
    socket.end('HTTP/1.1 502 Blocked\r\n\r\n');
  });
  proxy.on('upgrade', (request: http.IncomingMessage, socket: net.Socket) => {
    refused('UPGRADE', request.url ?? '');
    socket.destroy();
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const { port } = proxy.address() as net.AddressInfo;

  const check = (source: string, url: string) => {
    seen.add(url);
    if (!isLoopback(url)) foreign.push(`${source} ${url}`);
  };
  const watchPage = (page: Page) => {
    page.on('websocket', (socket) => check('websocket', socket.url()));
  };

  return {
    chromiumArgs: [`--proxy-server=http://127.0.0.1:${port}`],
    foreign,
    browserServices,
    seen,
    watch: (context) => {
      context.on('request', (request) => check('request', request.url()));
      context.pages().forEach(watchPage);
      context.on('page', watchPage);
    },
    close: () => new Promise<void>((resolve) => proxy.close(() => resolve())),
  };
}
