import { describe, expect, it } from 'vitest';
import { csvField, csvStream, toCsv } from './csv-writer.js';

describe('CSV writer', () => {
  it('writes RFC 4180 CSV', () => {
    expect(
      toCsv(
        ['a', 'b,c'],
        [
          ['x "y"', 1],
          [null, 'line\nbreak'],
          [' padded', -2.5],
          [undefined, true],
        ],
      ),
    ).toBe('a,"b,c"\r\n"x ""y""",1\r\n,"line\nbreak"\r\n" padded",-2.5\r\n,true\r\n');
  });

  it("prefixes string cells starting with = + - @ tab or CR with ', then quotes as needed", () => {
    expect(csvField('=1+1')).toBe("'=1+1");
    expect(csvField('+1')).toBe("'+1");
    expect(csvField('-1')).toBe("'-1");
    expect(csvField('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvField('\t=1')).toBe("'\t=1");
    expect(csvField('\r=1')).toBe(`"'\r=1"`);
    expect(csvField('=SUM(1,2)')).toBe(`"'=SUM(1,2)"`);
    expect(csvField('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`);
    expect(csvField('a=1')).toBe('a=1');
    expect(csvField(' =1')).toBe('" =1"');
    expect(csvField('')).toBe('');
  });

  it('leaves numbers, booleans and NULL alone: they are data, not text', () => {
    expect(csvField(-3.5)).toBe('-3.5');
    expect(csvField(-0.001)).toBe('-0.001');
    expect(csvField(false)).toBe('false');
    expect(csvField(null)).toBe('');
    expect(toCsv(['v'], [[-1], ['-1']])).toBe("v\r\n-1\r\n'-1\r\n");
  });

  it('writes every cell unaltered with escapeFormulas: false', () => {
    const raw = { escapeFormulas: false };
    expect(csvField('=1+1', raw)).toBe('=1+1');
    expect(csvField('=SUM(1,2)', raw)).toBe('"=SUM(1,2)"');
    expect(toCsv(['=h'], [['-x', -1]], raw)).toBe('=h\r\n-x,-1\r\n');
  });

  it('streams the same CSV in pieces of 1000 rows, giving the event loop a turn between them', async () => {
    const rows = Array.from({ length: 2500 }, (_v, i) => [i, `=text ${i}`, -i]);
    const pieces: string[] = [];
    // Counts turns of the event loop (a self-renewing setImmediate runs once per turn).
    let turns = 0;
    let ticking = true;
    const tick = () => {
      turns++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    for await (const piece of csvStream(['n', 'text', 'neg'], rows)) pieces.push(String(piece));
    ticking = false;
    expect(pieces.join('')).toBe(toCsv(['n', 'text', 'neg'], rows));
    expect(pieces).toHaveLength(4);
    expect(turns).toBeGreaterThanOrEqual(2);
  });

  it('writes German Excel CSV: semicolons, decimal commas, quoting by the chosen delimiter', () => {
    const excel = { delimiter: ';' as const, decimalSeparator: ',' as const };
    expect(
      toCsv(
        ['a;b', 'c,d'],
        [
          [1.5, -2],
          ['x;y', '=1'],
        ],
        excel,
      ),
    ).toBe(`"a;b";c,d\r\n1,5;-2\r\n"x;y";'=1\r\n`);
    expect(csvField(1.5, { decimalSeparator: ',' })).toBe('"1,5"');
    expect(csvField(1.5, { delimiter: '\t', decimalSeparator: ',' })).toBe('1,5');
    expect(csvField('a\tb', { delimiter: '\t' })).toBe('"a\tb"');
    expect(csvField('a,b', { delimiter: '|' })).toBe('a,b');
  });
});
