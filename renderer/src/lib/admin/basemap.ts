/**
 * Which basemap the console map draws, from the account's `uiSettings.mapStyleUrl`: nothing set →
 * the bundled offline world map; a MapLibre style URL → that style (made absolute against the page);
 * a `.pmtiles` file → not drawable without the `pmtiles` package, so the offline map with a notice.
 */
export type Basemap =
  | { kind: 'offline' }
  | { kind: 'style'; url: string; sameOrigin: boolean }
  | { kind: 'pmtiles-unsupported'; url: string };

export function basemapFor(setting: unknown, pageUrl: string): Basemap {
  if (typeof setting !== 'string' || !setting.trim()) return { kind: 'offline' };
  let url: URL;
  try {
    url = new URL(setting.trim(), pageUrl);
  } catch {
    return { kind: 'offline' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { kind: 'offline' };
  if (url.pathname.toLowerCase().endsWith('.pmtiles')) return { kind: 'pmtiles-unsupported', url: url.href };
  return { kind: 'style', url: url.href, sameOrigin: url.origin === new URL(pageUrl).origin };
}
