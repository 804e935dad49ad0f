import { showNumber } from '../format/display';

/** A file size in binary units (KiB, MiB, GiB), numbers in the UI language. */
export function showBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${showNumber(value, { decimals: unit === 0 ? 0 : 1 })} ${units[unit]}`;
}

/** A fraction 0–1 as a whole percentage in the UI language. */
export const showPercent = (fraction: number): string =>
  `${showNumber(Math.round(fraction * 100), { decimals: 0 })} %`;
