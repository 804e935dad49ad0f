import type { SitePlanImageType } from './site-plan.entity.js';

/** Bytes of a PMTiles header (spec v3: 127 bytes; magic `PMTiles`, then the version byte). */
export const PMTILES_HEADER_BYTES = 127;

/** Whether the first bytes of a file are a PMTiles v3 header; the reason otherwise. */
export function pmtilesProblem(head: Buffer): string | null {
  if (head.length < PMTILES_HEADER_BYTES) return 'the file is shorter than a PMTiles header';
  if (head.subarray(0, 7).toString('latin1') !== 'PMTiles') return 'the file is not a PMTiles archive';
  if (head[7] !== 3) return `PMTiles version ${head[7]} is not supported (only version 3)`;
  return null;
}

/**
 * The raster type of an image from its first bytes (PNG, JPEG, WebP), or null. SVG and everything
 * else are refused: an SVG can carry scripts and references to other origins, and a site plan is a
 * raster export anyway.
 */
export function imageTypeOf(head: Buffer): SitePlanImageType | null {
  if (
    head.length >= 8 &&
    head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))
  )
    return 'image/png';
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg';
  if (
    head.length >= 12 &&
    head.subarray(0, 4).toString('latin1') === 'RIFF' &&
    head.subarray(8, 12).toString('latin1') === 'WEBP'
  )
    return 'image/webp';
  return null;
}
