import { describe, expect, it } from 'vitest';
import { parsePgTimestamptz, pgTimestamptzToIso } from './pg-timestamp.js';

describe('parsePgTimestamptz', () => {
  it('reads PostgreSQL text output as the same instant the engine parser finds', () => {
    const cases: Array<[string, string]> = [
      ['2026-11-25 21:40:00+00', '2026-11-25T21:40:00.000Z'],
      ['2026-11-25 21:40:00.5+00', '2026-11-25T21:40:00.500Z'],
      ['2026-11-25 21:40:00.123456+00', '2026-11-25T21:40:00.123Z'],
      ['2026-03-29 03:15:07.04+02', '2026-03-29T01:15:07.040Z'],
      ['2026-01-01 00:00:00-05:30', '2026-01-01T05:30:00.000Z'],
      ['1900-01-01 00:00:00+00:53:28', '1899-12-31T23:06:32.000Z'],
      ['2024-02-29 23:59:59.999+00', '2024-02-29T23:59:59.999Z'],
    ];
    for (const [text, iso] of cases) expect(parsePgTimestamptz(text).toISOString(), text).toBe(iso);
  });

  it('leaves forms it does not read to the engine parser', () => {
    expect(parsePgTimestamptz('0099-01-01 00:00:00+00').getUTCFullYear()).toBe(99);
    expect(Number.isNaN(parsePgTimestamptz('infinity').getTime())).toBe(true);
  });
});

describe('pgTimestamptzToIso', () => {
  it('writes what toISOString writes of the parsed instant, for UTC text and any other', () => {
    const texts = [
      '2026-11-25 21:40:00+00',
      '2026-11-25 21:40:00.5+00',
      '2026-11-25 21:40:00.123456+00',
      '2026-11-25 21:40:00.000999+00',
      '2026-03-29 03:15:07.04+02',
      '1900-01-01 00:00:00+00:53:28',
      '0099-01-01 00:00:00+00',
    ];
    // And a spread of instants as a UTC session writes them (trailing fraction zeros dropped).
    for (let ms = Date.UTC(1970, 0, 1); ms < Date.UTC(2100, 0, 1); ms += 987_654_321_123) {
      const iso = new Date(ms).toISOString();
      texts.push(`${iso.slice(0, 10)} ${iso.slice(11, 23).replace(/\.?0+$/, '')}+00`);
    }
    for (const text of texts)
      expect(pgTimestamptzToIso(text), text).toBe(parsePgTimestamptz(text).toISOString());
  });
});
