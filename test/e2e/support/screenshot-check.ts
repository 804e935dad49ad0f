import zlib from 'node:zlib';

/**
 * "Is this screenshot a picture?" without an image package: decodes the 8-bit RGB/RGBA,
 * non-interlaced PNGs that Chromium's screenshots are (Node's zlib inflates the pixel data) and
 * counts colours. A blank page is one colour; a page with text, borders and charts has hundreds.
 */
export interface PictureStats {
  width: number;
  height: number;
  distinctColours: number;
  /** Share of the pixels (0..1) taken by the most common colour. */
  dominantShare: number;
}

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export function pictureStats(png: Buffer): PictureStats {
  if (!png.subarray(0, 8).equals(SIGNATURE)) throw new Error('not a PNG');
  let width = 0;
  let height = 0;
  let channels = 0;
  const data: Buffer[] = [];
  for (let offset = 8; offset < png.length;) {
    const length = png.readUInt32BE(offset);
    const type = png.toString('ascii', offset + 4, offset + 8);
    const body = png.subarray(offset + 8, offset + 8 + length);
    if (type === 'IHDR') {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      const [depth, colourType, , , interlace] = [body[8], body[9], body[10], body[11], body[12]];
      channels = colourType === 6 ? 4 : colourType === 2 ? 3 : 0;
      if (depth !== 8 || channels === 0 || interlace !== 0)
        throw new Error(
          `unsupported PNG (depth ${depth}, colour type ${colourType}, interlace ${interlace})`,
        );
    } else if (type === 'IDAT') data.push(body);
    offset += 12 + length;
  }
  const raw = zlib.inflateSync(Buffer.concat(data));
  const stride = width * channels;
  const previous = Buffer.alloc(stride);
  const line = Buffer.alloc(stride);
  const counts = new Map<number, number>();
  for (let y = 0; y < height; y++) {
    const start = y * (stride + 1);
    unfilter(raw[start]!, raw.subarray(start + 1, start + 1 + stride), previous, line, channels);
    for (let x = 0; x < stride; x += channels) {
      const colour = (line[x]! << 16) | (line[x + 1]! << 8) | line[x + 2]!;
      counts.set(colour, (counts.get(colour) ?? 0) + 1);
    }
    line.copy(previous);
  }
  const dominant = Math.max(...counts.values());
  return { width, height, distinctColours: counts.size, dominantShare: dominant / (width * height) };
}

/** PNG's five scanline filters (None, Sub, Up, Average, Paeth), into `out`. */
function unfilter(filter: number, input: Buffer, above: Buffer, out: Buffer, bpp: number): void {
  for (let i = 0; i < input.length; i++) {
    const left = i >= bpp ? out[i - bpp]! : 0;
    const up = above[i]!;
    const upLeft = i >= bpp ? above[i - bpp]! : 0;
    let predictor = 0;
    if (filter === 1) predictor = left;
    else if (filter === 2) predictor = up;
    else if (filter === 3) predictor = (left + up) >> 1;
    else if (filter === 4) {
      const p = left + up - upLeft;
      const [pa, pb, pc] = [Math.abs(p - left), Math.abs(p - up), Math.abs(p - upLeft)];
      predictor = pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft;
    }
    out[i] = (input[i]! + predictor) & 0xff;
  }
}
