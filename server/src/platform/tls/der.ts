/**
 * The few ASN.1 DER encodings an X.509 certificate needs (ITU-T X.690). Every function returns the
 * complete element (tag, length, content), so certificates read as nested calls.
 */

function element(tag: number, content: Buffer): Buffer {
  const length = content.length;
  if (length < 0x80) return Buffer.concat([Buffer.from([tag, length]), content]);
  const bytes: number[] = [];
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
  return Buffer.concat([Buffer.from([tag, 0x80 | bytes.length, ...bytes]), content]);
}

export const sequence = (...items: Buffer[]): Buffer => element(0x30, Buffer.concat(items));
export const set = (...items: Buffer[]): Buffer => element(0x31, Buffer.concat(items));
export const boolean = (value: boolean): Buffer => element(0x01, Buffer.from([value ? 0xff : 0x00]));
export const octetString = (content: Buffer): Buffer => element(0x04, content);
export const utf8String = (text: string): Buffer => element(0x0c, Buffer.from(text, 'utf8'));
/** A bit string of whole bytes (keys, signatures). */
export const bitString = (content: Buffer, unusedBits = 0): Buffer =>
  element(0x03, Buffer.concat([Buffer.from([unusedBits]), content]));

/** A non-negative integer from its big-endian bytes, in the shortest form DER allows. */
export function unsignedInteger(bytes: Buffer): Buffer {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  const trimmed = bytes.subarray(start);
  // A set top bit would read as negative: DER prefixes a zero byte.
  return element(0x02, trimmed[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), trimmed]) : trimmed);
}

export function objectIdentifier(dotted: string): Buffer {
  const arcs = dotted.split('.').map(Number);
  const bytes = [40 * arcs[0]! + arcs[1]!];
  for (const arc of arcs.slice(2)) {
    const groups = [arc & 0x7f];
    for (let rest = Math.floor(arc / 128); rest > 0; rest = Math.floor(rest / 128))
      groups.unshift(0x80 | (rest & 0x7f));
    bytes.push(...groups);
  }
  return element(0x06, Buffer.from(bytes));
}

/** X.509 Time: UTCTime through 2049, GeneralizedTime from 2050 on (RFC 5280, 4.1.2.5). */
export function time(date: Date): Buffer {
  const iso = date.toISOString(); // 2026-11-22T10:00:12.345Z
  const digits = iso.slice(0, 19).replace(/[-T:]/g, '') + 'Z'; // 20261122100012Z
  return date.getUTCFullYear() < 2050
    ? element(0x17, Buffer.from(digits.slice(2), 'ascii'))
    : element(0x18, Buffer.from(digits, 'ascii'));
}

/** `[n]` EXPLICIT: the element wrapped in a constructed context tag. */
export const explicit = (n: number, inner: Buffer): Buffer => element(0xa0 | n, inner);
/** `[n]` IMPLICIT of a primitive type: the content under a context tag. */
export const implicit = (n: number, content: Buffer): Buffer => element(0x80 | n, content);
