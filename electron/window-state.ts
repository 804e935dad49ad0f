import fs from 'node:fs';
import path from 'node:path';

/**
 * Remembers where the window was. The saved position is used only if it is still visible on
 * one of the current displays (monitors get unplugged, resolutions change); otherwise the window
 * opens centred on the primary display. Pure except for the small read/write helpers.
 */

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface WindowState {
  bounds: Rect;
  maximized: boolean;
}

export const DEFAULT_SIZE = { width: 1280, height: 820 };
export const MIN_SIZE = { width: 800, height: 560 };
/** How much of the window (from its top-left, where the title bar is) must lie on a display. */
const VISIBLE_PART = { width: 120, height: 40 };

const overlap = (a: Rect, b: Rect): { width: number; height: number } => ({
  width: Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x),
  height: Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y),
});

/** Bounds to open the window with, given what was saved and the displays' work areas (primary first). */
export function restoreBounds(saved: WindowState | undefined, workAreas: readonly Rect[]): WindowState {
  const primary = workAreas[0] ?? { x: 0, y: 0, ...DEFAULT_SIZE };
  if (saved) {
    // Judge the window at the size it will get, so a tiny saved window is not thrown away.
    const width = Math.max(saved.bounds.width, MIN_SIZE.width);
    const titleBar: Rect = { x: saved.bounds.x, y: saved.bounds.y, width, height: VISIBLE_PART.height * 2 };
    const area = workAreas.find((a) => {
      const o = overlap(titleBar, a);
      return o.width >= VISIBLE_PART.width && o.height >= VISIBLE_PART.height;
    });
    if (area) {
      return {
        bounds: {
          x: saved.bounds.x,
          y: saved.bounds.y,
          width: clamp(saved.bounds.width, MIN_SIZE.width, area.width),
          height: clamp(saved.bounds.height, MIN_SIZE.height, area.height),
        },
        maximized: saved.maximized,
      };
    }
  }
  const width = Math.min(DEFAULT_SIZE.width, primary.width);
  const height = Math.min(DEFAULT_SIZE.height, primary.height);
  return {
    bounds: {
      x: primary.x + Math.round((primary.width - width) / 2),
      y: primary.y + Math.round((primary.height - height) / 2),
      width,
      height,
    },
    maximized: saved?.maximized ?? false,
  };
}

/** At least `min`, at most `max`; a display smaller than the minimum wins over the minimum. */
const clamp = (value: number, min: number, max: number): number => Math.min(Math.max(value, min), max);

const isFiniteNumber = (n: unknown): n is number => typeof n === 'number' && Number.isFinite(n);

/** A saved state, or undefined when the file content is not one (hand-edited, older format). */
export function parseWindowState(value: unknown): WindowState | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { bounds, maximized } = value as { bounds?: Record<string, unknown>; maximized?: unknown };
  const { x, y, width, height } = bounds ?? {};
  if (!isFiniteNumber(x) || !isFiniteNumber(y) || !isFiniteNumber(width) || !isFiniteNumber(height))
    return undefined;
  if (width <= 0 || height <= 0) return undefined;
  return { bounds: { x, y, width, height }, maximized: maximized === true };
}

export function readWindowState(file: string): WindowState | undefined {
  try {
    return parseWindowState(JSON.parse(fs.readFileSync(file, 'utf8')));
  } catch {
    return undefined;
  }
}

/** Written via a temporary file, so a crash while saving never leaves half a file. */
export function writeWindowState(file: string, state: WindowState): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, `${JSON.stringify(state)}\n`);
  fs.renameSync(temporary, file);
}
