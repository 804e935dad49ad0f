import { describe, expect, it } from 'vitest';
import { chooseLogFormat } from './logger.js';
import { formatLogLine, prettyStream } from './pretty-log.js';

const plain = { colors: false };
const at = new Date(2026, 0, 2, 10, 4, 5, 123).getTime();
const line = (entry: Record<string, unknown>) =>
  JSON.stringify({ level: 30, time: at, pid: 1, node: 'n1', ...entry });

describe('pretty log lines', () => {
  it('shows time, level and message, then the other fields as key=value; not pid, host or node', () => {
    expect(formatLogLine(line({ msg: 'Stellwerk is ready', httpPort: 8080, embedded: true }), plain)).toBe(
      '10:04:05.123 INFO  Stellwerk is ready  httpPort=8080 embedded=true\n',
    );
  });

  it('quotes values with spaces and labels each level', () => {
    expect(formatLogLine(line({ level: 40, msg: 'slow', reason: 'disk is full' }), plain)).toBe(
      '10:04:05.123 WARN  slow  reason="disk is full"\n',
    );
    expect(formatLogLine(line({ level: 50, msg: 'x' }), plain)).toContain(' ERROR x');
  });

  it("puts an error's message inline and its stack indented below", () => {
    const err = {
      type: 'Error',
      message: 'connect ECONNREFUSED',
      stack: 'Error: connect ECONNREFUSED\n    at a (x.js:1:1)\n    at b (y.js:2:2)',
    };
    expect(formatLogLine(line({ level: 50, msg: 'request failed', err }), plain)).toBe(
      '10:04:05.123 ERROR request failed  err="connect ECONNREFUSED"\n    at a (x.js:1:1)\n    at b (y.js:2:2)\n',
    );
  });

  it('shows a large object (the effective configuration) as an indented block', () => {
    const config = Object.fromEntries(
      Array.from({ length: 6 }, (_, i) => [`STELLWERK_SETTING_${i}`, `value ${i} (default)`]),
    );
    const text = formatLogLine(line({ msg: 'effective configuration (secrets masked)', config }), plain);
    expect(text.split('\n').slice(0, 3)).toEqual([
      '10:04:05.123 INFO  effective configuration (secrets masked)',
      '    config:',
      '      STELLWERK_SETTING_0: value 0 (default)',
    ]);
  });

  it('colors the level only on request, and passes lines that are not JSON through', () => {
    expect(formatLogLine(line({ msg: 'x' }), { colors: true })).toContain('\x1b[32mINFO \x1b[0m');
    expect(formatLogLine('not json', plain)).toBe('not json\n');
  });

  it('reassembles lines split across writes', () => {
    const out: string[] = [];
    const stream = prettyStream({ write: (text: string) => out.push(text) }, plain);
    const whole = `${line({ msg: 'one' })}\n${line({ msg: 'two' })}\n`;
    stream.write(whole.slice(0, 20));
    stream.write(whole.slice(20));
    expect(out.map((t) => t.trim().slice(19))).toEqual(['one', 'two']);
  });
});

describe('log format', () => {
  it('auto is pretty on a terminal and JSON elsewhere; an explicit format wins', () => {
    expect(chooseLogFormat('auto', true)).toBe('pretty');
    expect(chooseLogFormat('auto', false)).toBe('json');
    expect(chooseLogFormat('json', true)).toBe('json');
    expect(chooseLogFormat('pretty', false)).toBe('pretty');
  });
});
