import zlib from 'node:zlib';
import { zxyToTileId } from 'pmtiles';

/**
 * A PMTiles v3 archive written by hand (the `pmtiles` package only reads): header, one root
 * directory, JSON metadata and the tiles, all uncompressed. Enough for tests of serving and
 * drawing; real archives come from tippecanoe or `pmtiles convert`.
 */
export interface ArchiveTile {
  z: number;
  x: number;
  y: number;
  data: Buffer;
}

const HEADER_BYTES = 127;
const COMPRESSION_NONE = 1;
export const TILE_TYPE = { mvt: 1, png: 2 } as const;

function varint(value: number, out: number[]): void {
  let rest = value;
  while (rest >= 0x80) {
    out.push((rest & 0x7f) | 0x80);
    rest = Math.floor(rest / 128);
  }
  out.push(rest);
}

/** The directory: entry count, then tile id deltas, run lengths, lengths and offsets, column by column. */
function directory(entries: { tileId: number; offset: number; length: number }[]): Buffer {
  const out: number[] = [];
  varint(entries.length, out);
  let lastId = 0;
  for (const entry of entries) {
    varint(entry.tileId - lastId, out);
    lastId = entry.tileId;
  }
  for (const _entry of entries) varint(1, out);
  for (const entry of entries) varint(entry.length, out);
  entries.forEach((entry, index) => {
    const previous = entries[index - 1];
    // 0 means "right after the previous tile", else offset + 1.
    if (previous && entry.offset === previous.offset + previous.length) varint(0, out);
    else varint(entry.offset + 1, out);
  });
  return Buffer.from(out);
}

export function pmtilesArchive(
  tiles: ArchiveTile[],
  options: { tileType: number; metadata?: Record<string, unknown>; center?: [number, number, number] },
): Buffer {
  const sorted = tiles
    .map((tile) => ({ ...tile, tileId: zxyToTileId(tile.z, tile.x, tile.y) }))
    .sort((a, b) => a.tileId - b.tileId);
  let offset = 0;
  const entries = sorted.map((tile) => {
    const entry = { tileId: tile.tileId, offset, length: tile.data.length };
    offset += tile.data.length;
    return entry;
  });
  const root = directory(entries);
  const metadata = Buffer.from(JSON.stringify(options.metadata ?? {}));
  const tileData = Buffer.concat(sorted.map((tile) => tile.data));
  const zooms = sorted.map((tile) => tile.z);
  const [centerLon, centerLat, centerZoom] = options.center ?? [0, 0, Math.min(...zooms)];

  const header = Buffer.alloc(HEADER_BYTES);
  header.write('PMTiles', 0, 'ascii');
  header.writeUInt8(3, 7);
  const rootOffset = HEADER_BYTES;
  const metadataOffset = rootOffset + root.length;
  const tileDataOffset = metadataOffset + metadata.length;
  const u64 = (value: number, at: number) => header.writeBigUInt64LE(BigInt(value), at);
  u64(rootOffset, 8);
  u64(root.length, 16);
  u64(metadataOffset, 24);
  u64(metadata.length, 32);
  u64(tileDataOffset, 40); // no leaf directories: offset where they would be, length 0
  u64(0, 48);
  u64(tileDataOffset, 56);
  u64(tileData.length, 64);
  u64(sorted.length, 72);
  u64(sorted.length, 80);
  u64(sorted.length, 88);
  header.writeUInt8(1, 96); // clustered: tiles in tile id order
  header.writeUInt8(COMPRESSION_NONE, 97);
  header.writeUInt8(COMPRESSION_NONE, 98);
  header.writeUInt8(options.tileType, 99);
  header.writeUInt8(Math.min(...zooms), 100);
  header.writeUInt8(Math.max(...zooms), 101);
  const e7 = (degrees: number) => Math.round(degrees * 1e7);
  header.writeInt32LE(e7(-180), 102);
  header.writeInt32LE(e7(-85), 106);
  header.writeInt32LE(e7(180), 110);
  header.writeInt32LE(e7(85), 114);
  header.writeUInt8(centerZoom, 118);
  header.writeInt32LE(e7(centerLon), 119);
  header.writeInt32LE(e7(centerLat), 123);
  return Buffer.concat([header, root, metadata, tileData]);
}

/** Every tile of zoom levels `minZoom`..`maxZoom`. */
export function pyramid(
  minZoom: number,
  maxZoom: number,
  data: (z: number, x: number, y: number) => Buffer,
): ArchiveTile[] {
  const tiles: ArchiveTile[] = [];
  for (let z = minZoom; z <= maxZoom; z++)
    for (let x = 0; x < 2 ** z; x++)
      for (let y = 0; y < 2 ** z; y++) tiles.push({ z, x, y, data: data(z, x, y) });
  return tiles;
}

/** A one-colour RGB PNG (8-bit, no filter), the simplest image a browser decodes. */
export function solidPng(rgb: [number, number, number], size = 256): Buffer {
  const crcTable = Array.from({ length: 256 }, (_v, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (bytes: Buffer) => {
    let c = 0xffffffff;
    for (const byte of bytes) c = crcTable[(c ^ byte) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, body: Buffer) => {
    const typed = Buffer.concat([Buffer.from(type, 'ascii'), body]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(body.length);
    const check = Buffer.alloc(4);
    check.writeUInt32BE(crc(typed));
    return Buffer.concat([length, typed, check]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(size * 3).map((_v, i) => rgb[i % 3]!)]);
  const pixels = zlib.deflateSync(Buffer.concat(Array.from({ length: size }, () => row)));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', pixels),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A feature of a vector tile in tile coordinates (0..4096). */
export type VectorFeature =
  | { type: 'point'; at: [number, number] }
  | { type: 'line'; path: [number, number][] }
  | { type: 'polygon'; ring: [number, number][] };

/**
 * One Mapbox Vector Tile (protobuf, spec 2.1) with one layer of untagged features: the commands
 * MoveTo/LineTo/ClosePath over zigzag deltas. A polygon ring must be clockwise on screen (y down).
 */
export function vectorTile(layer: string, features: VectorFeature[]): Buffer {
  const field = (number: number, wire: number, out: number[]) => varint((number << 3) | wire, out);
  const bytes = (number: number, body: number[] | Buffer, out: number[]) => {
    field(number, 2, out);
    varint(body.length, out);
    out.push(...body);
  };
  const zigzag = (n: number) => (n << 1) ^ (n >> 31);
  const command = (id: number, count: number) => (id & 7) | (count << 3);
  const encoded = features.map((feature) => {
    const points =
      feature.type === 'point' ? [feature.at] : feature.type === 'line' ? feature.path : feature.ring;
    const geometry: number[] = [];
    let [cx, cy] = [0, 0];
    points.forEach(([x, y], index) => {
      if (index === 0) geometry.push(command(1, 1));
      if (index === 1) geometry.push(command(2, points.length - 1));
      geometry.push(zigzag(x - cx), zigzag(y - cy));
      [cx, cy] = [x, y];
    });
    if (feature.type === 'polygon') geometry.push(command(7, 1));
    const packed: number[] = [];
    for (const value of geometry) varint(value, packed);
    const out: number[] = [];
    field(3, 0, out);
    varint(feature.type === 'point' ? 1 : feature.type === 'line' ? 2 : 3, out);
    bytes(4, packed, out);
    return out;
  });
  const body: number[] = [];
  field(15, 0, body);
  varint(2, body);
  bytes(1, Buffer.from(layer, 'utf8'), body);
  for (const feature of encoded) bytes(2, feature, body);
  field(5, 0, body);
  varint(4096, body);
  const tile: number[] = [];
  bytes(3, body, tile);
  return Buffer.from(tile);
}
