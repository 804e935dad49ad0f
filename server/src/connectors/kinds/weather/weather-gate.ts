import { sleep } from '../../links/link-runtime.js';
import { LinkError, type LinkContext } from '../../links/link.types.js';
import { errorReason } from './open-meteo.js';

/** Requests to one API origin are at least this far apart, whichever connectors make them. */
const MIN_GAP_MS = 1000;
/** Without a usable Retry-After, a rate-limited API is asked again after this long. */
const DEFAULT_RETRY_AFTER_MS = 60_000;
const MAX_RETRY_AFTER_MS = 24 * 3_600_000;
const CACHED_RESPONSES = 200;
const REQUEST_TIMEOUT_MS = 30_000;
const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

/** Seconds or an HTTP date (RFC 9110, 10.2.3) → milliseconds from `now`, bounded. */
export function retryAfterMs(header: string | null, now: number): number {
  if (header === null) return DEFAULT_RETRY_AFTER_MS;
  const value = header.trim();
  const ms = /^\d+$/.test(value) ? Number(value) * 1000 : Date.parse(value) - now;
  if (!Number.isFinite(ms)) return DEFAULT_RETRY_AFTER_MS;
  return Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS);
}

/**
 * The weather API as the server's connectors share it: answers are cached by URL (connectors of
 * several tenants that poll the same places share one request), requests to one origin are spaced,
 * and an HTTP 429 or 503 stops every request to that origin until its Retry-After has passed.
 */
export class WeatherGate {
  private readonly cache = new Map<string, { at: number; body: string }>();
  private readonly origins = new Map<string, { notBefore: number; last: number; status: number }>();

  /** The answer's body; a cached one younger than `maxAgeMs`. LinkError for answers a tenant may read. */
  async get(ctx: LinkContext, url: string, maxAgeMs: number): Promise<string> {
    const cached = this.cache.get(url);
    if (cached && Date.now() - cached.at < maxAgeMs) return cached.body;
    const origin = new URL(url).origin;
    const gate = this.origins.get(origin) ?? { notBefore: 0, last: 0, status: 429 };
    this.origins.set(origin, gate);
    if (Date.now() < gate.notBefore) throw limited(gate.notBefore, gate.status);
    const wait = gate.last + MIN_GAP_MS - Date.now();
    if (wait > 0) await sleep(wait, ctx.signal);
    gate.last = Date.now();
    const response = await ctx.dial.fetch(url, {
      headers: { accept: 'application/json' },
      signal: AbortSignal.any([ctx.signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)]),
      maxResponseBytes: MAX_RESPONSE_BYTES,
    });
    const body = await response.text();
    if (response.status === 429 || response.status === 503) {
      gate.notBefore = Date.now() + retryAfterMs(response.headers.get('retry-after'), Date.now());
      gate.status = response.status;
      throw limited(gate.notBefore, response.status);
    }
    if (!response.ok) {
      const reason = errorReason(body);
      throw new LinkError(`The weather API answered HTTP ${response.status}${reason ? `: ${reason}` : ''}`);
    }
    this.cache.delete(url);
    this.cache.set(url, { at: Date.now(), body });
    // Oldest first: a Map keeps insertion order.
    for (const key of this.cache.keys()) {
      if (this.cache.size <= CACHED_RESPONSES) break;
      this.cache.delete(key);
    }
    return body;
  }

  /** Drops a cached answer (one that turned out unreadable). */
  forget(url: string): void {
    this.cache.delete(url);
  }
}

const limited = (notBefore: number, status: number) =>
  new LinkError(
    `The weather API limits requests (HTTP ${status}): next request after ${new Date(
      Math.ceil(notBefore / 1000) * 1000,
    ).toISOString()}`,
  );
