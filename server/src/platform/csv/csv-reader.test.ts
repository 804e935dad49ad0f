import { describe, expect, it } from 'vitest';
import { CsvReadError, CsvTooManyRowsError, readCsv, textPieces, type CsvPiece } from './csv-reader.js';

const options = { batchRows: 2, maxRows: 10, nice: 0, window: 1 };

async function collect(source: Iterable<Uint8Array | string>, opts = options): Promise<CsvPiece[]> {
  const pieces: CsvPiece[] = [];
  for await (const piece of readCsv(source, opts)) pieces.push(piece);
  return pieces;
}

describe('CSV reader thread', () => {
  it('yields the header, then batches of [line, cells…] as JSON, then the count', async () => {
    const text = '\uFEFFa, b\n1,"x, y"\n\n2,"multi\nline"\n3,z\n';
    expect(await collect(textPieces(text))).toEqual([
      { type: 'header', columns: ['a', 'b'] },
      {
        type: 'rows',
        json: JSON.stringify([
          [2, '1', 'x, y'],
          [5, '2', 'multi\nline'],
        ]),
        count: 2,
      },
      { type: 'rows', json: JSON.stringify([[6, '3', 'z']]), count: 1 },
      { type: 'done', rows: 3 },
    ]);
  });

  it('reads bytes split inside a character and from views of a larger buffer', async () => {
    const bytes = Buffer.from('name\nGrüße\nÄrger\n');
    const whole = Buffer.concat([Buffer.from('xxxx'), bytes]);
    const view = whole.subarray(4);
    const split = [view.subarray(0, 9), view.subarray(9)];
    const pieces = await collect(split);
    expect(pieces[1]).toEqual({
      type: 'rows',
      json: JSON.stringify([
        [2, 'Grüße'],
        [3, 'Ärger'],
      ]),
      count: 2,
    });
  });

  it('throws on a malformed file and on too many rows; an empty file is just done', async () => {
    await expect(collect(['a,b\n1,2\n3\n'])).rejects.toThrow(CsvReadError);
    await expect(collect(['a,b\n1,"open\n'])).rejects.toThrow(/Quote Not Closed/);
    const many = `a\n${Array.from({ length: 11 }, (_v, i) => i).join('\n')}\n`;
    await expect(collect([many])).rejects.toThrow(CsvTooManyRowsError);
    expect(await collect([''])).toEqual([{ type: 'done', rows: 0 }]);
  });

  it('stops the thread when the reader stops early', async () => {
    const reader = readCsv(['a\n1\n2\n3\n4\n'], options);
    expect((await reader.next()).value).toEqual({ type: 'header', columns: ['a'] });
    await reader.return(undefined);
    expect((await reader.next()).done).toBe(true);
  });
});
