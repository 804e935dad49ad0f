import { ConfigError } from '../config-values.js';

/**
 * The console's own policy: everything from this origin, no inline scripts. Images may be data
 * URLs (the 2FA QR code); MapLibre needs blob workers; live values use WebSocket to the same host.
 * `mapOrigins` (STELLWERK_MAP_ORIGINS) are the tile servers a site's basemap style or `.pmtiles`
 * archive lives on: MapLibre fetches styles, tiles, glyphs and sprites from them and decodes images.
 */
export function contentSecurityPolicy(mapOrigins: readonly string[] = []): string {
  const maps = mapOrigins.map((origin) => ` ${origin}`).join('');
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    `img-src 'self' data: blob:${maps}`,
    "worker-src 'self' blob:",
    `connect-src 'self' ws: wss:${maps}`,
    "frame-ancestors 'none'",
    "base-uri 'self'",
    "form-action 'self'",
  ].join('; ');
}

/**
 * STELLWERK_MAP_ORIGINS: comma- or space-separated http(s) origins (`https://tiles.example.com`).
 * Only the origin counts; a path or wildcard would let a policy typo open more than meant.
 */
export function parseMapOrigins(raw: string, name: string): string[] {
  const origins = new Set<string>();
  for (const item of raw.split(/[\s,]+/).filter(Boolean)) {
    let url: URL;
    try {
      url = new URL(item);
    } catch {
      throw new ConfigError(name, `must list origins like https://tiles.example.com, got "${item}"`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new ConfigError(name, `must list http(s) origins, got "${item}"`);
    if (url.pathname !== '/' || url.search || url.hash || url.username || url.password)
      throw new ConfigError(name, `must list origins without path or query, got "${item}"`);
    origins.add(url.origin);
  }
  return [...origins];
}
