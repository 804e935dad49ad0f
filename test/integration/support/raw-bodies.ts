import { pmtilesArchive, solidPng, TILE_TYPE } from './pmtiles-archive.js';

/**
 * Bodies of the routes that take a file, not JSON, for the route-table probes: the smallest valid
 * file of each, so a probe that should succeed can.
 */
const RAW_BODIES: Record<string, () => { type: string; payload: Buffer }> = {
  'PUT /xapi/v1/accounts/:id/basemap': () => ({
    type: 'application/vnd.pmtiles',
    payload: pmtilesArchive([{ z: 0, x: 0, y: 0, data: solidPng([90, 90, 90], 4) }], {
      tileType: TILE_TYPE.png,
    }),
  }),
  'PUT /xapi/v1/site-plans/:id/image': () => ({ type: 'image/png', payload: solidPng([200, 200, 200], 4) }),
};

export const rawBodyOf = (route: string) => RAW_BODIES[route]?.();
