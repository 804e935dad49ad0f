import { describe, expect, it } from 'vitest';
import { spreadsheetCsv } from './chart-download';

describe('chart CSV format per console language', () => {
  it('asks German consoles for German Excel CSV and leaves English at RFC 4180 defaults', () => {
    expect(spreadsheetCsv('de')).toEqual({ delimiter: ';', decimalSeparator: ',', bom: true });
    expect(spreadsheetCsv('en')).toEqual({});
  });
});
