import { constant, integer } from './config-values.js';
import { variable } from './config-variable.js';

/** Uploaded site maps: basemap archives and site plan images (config-variables.ts lists them here). */
export const MAP_VARIABLES = [
  variable({
    name: 'STELLWERK_BASEMAP_MAX_BYTES',
    key: 'basemapMaxBytes',
    description:
      'Largest `.pmtiles` basemap an account may upload in the console; the upload is streamed to disk and refused beyond this size.',
    defaultText: '`2147483648` (2 GiB)',
    default: constant(2 * 1024 ** 3),
    parse: integer(1024, 64 * 1024 ** 3),
  }),
  variable({
    name: 'STELLWERK_SITE_PLAN_MAX_BYTES',
    key: 'sitePlanMaxBytes',
    description:
      'Largest site plan image (PNG, JPEG or WebP) the server accepts; images are kept in the database.',
    defaultText: '`26214400` (25 MiB)',
    default: constant(25 * 1024 ** 2),
    parse: integer(1024, 256 * 1024 ** 2),
  }),
];
