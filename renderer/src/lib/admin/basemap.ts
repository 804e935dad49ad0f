/**
 * Which basemap the console map draws, from the account's `uiSettings.mapStyleUrl`: nothing set →
 * the bundled offline world map; a MapLibre style URL → that style (made absolute against the page);
 * a `.pmtiles` archive → a style made from the archive's header and metadata (raster or vector).
 * `sameOrigin` tells whether the page's content security policy lets the browser fetch it without
 * the server's STELLWERK_MAP_ORIGINS.
 */
export type Basemap =
  | { kind: 'offline' }
  | { kind: 'style'; url: string; sameOrigin: boolean }
  | { kind: 'pmtiles'; url: string; sameOrigin: boolean };

export function basemapFor(setting: unknown, pageUrl: string): Basemap {
  if (typeof setting !== 'string' || !setting.trim()) return { kind: 'offline' };
  let url: URL;
  try {
    url = new URL(setting.trim(), pageUrl);
  } catch {
    return { kind: 'offline' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { kind: 'offline' };
  const sameOrigin = url.origin === new URL(pageUrl).origin;
  if (url.pathname.toLowerCase().endsWith('.pmtiles')) return { kind: 'pmtiles', url: url.href, sameOrigin };
  return { kind: 'style', url: url.href, sameOrigin };
}
