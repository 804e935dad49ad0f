import { untrack } from 'svelte';
import type { Language } from '../i18n.svelte';

/**
 * The spec's map view parameters (`zoomlock`, `pitch`, `mapstyle`, `language`), read alike by the
 * public dashboard view (from its query) and the console's map page and dashboard page (from the
 * query of the `#/…?…` route), so one link means the same everywhere.
 */
export interface MapView {
  /** Default false. */
  zoomLock: boolean;
  /** Map tilt in degrees, 0–85; default 0. */
  pitch: number;
  /** `light` or `dark` map colours; null: the page's theme. */
  mapStyle: 'light' | 'dark' | null;
  /** null: not given (the console keeps the user's language, the public view shows English). */
  language: Language | null;
}

export const MAX_PITCH = 85;
// `?zoomlock` alone counts as true, like an HTML boolean attribute.
const TRUE = new Set(['true', '1', 'yes', '']);

export function parseMapView(query: URLSearchParams): MapView {
  const pitch = Number(query.get('pitch') ?? 0);
  const style = query.get('mapstyle');
  const zoomlock = query.get('zoomlock');
  const language = query.get('language')?.toLowerCase();
  return {
    zoomLock: zoomlock !== null && TRUE.has(zoomlock.toLowerCase()),
    pitch: Number.isFinite(pitch) ? Math.min(MAX_PITCH, Math.max(0, pitch)) : 0,
    mapStyle: style === 'light' || style === 'dark' ? style : null,
    language: language === 'de' || language === 'en' ? language : null,
  };
}

/** What TwinMap takes from a view. */
export function mapProps(view: MapView): {
  zoomLock: boolean;
  pitch: number;
  palette: 'light' | 'dark' | null;
} {
  return { zoomLock: view.zoomLock, pitch: view.pitch, palette: view.mapStyle };
}

/** Changes whenever the map must be built anew (maplibre takes zoom handlers and pitch at creation). */
export const mapViewKey = (view: MapView) => `${view.zoomLock}:${view.pitch}:${view.mapStyle ?? ''}`;

/**
 * Shows the view's language while a console page is open and gives the user's back when it closes
 * (returned as an effect's cleanup); without a language parameter nothing changes. The current
 * language is read untracked: an effect depending on it would undo and redo its own change forever.
 */
export function showLanguage(
  i18n: { language: Language; use(language: Language): void },
  language: Language | null,
): (() => void) | undefined {
  const before = untrack(() => i18n.language);
  if (!language || language === before) return undefined;
  i18n.use(language);
  return () => i18n.use(before);
}
