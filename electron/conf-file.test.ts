import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfValueError, parseConf, updateConf, updateConfFile } from './conf-file.js';

const HAND_WRITTEN = [
  '# Stellwerk settings, written by IT',
  'STELLWERK_HTTP_PORT=8080',
  '',
  '# keep the broker on the standard port',
  'STELLWERK_MQTT_PORT = 1883',
  'STELLWERK_LOG_LEVEL=debug',
  'SOMETHING_ELSE="kept as is"',
  '',
].join('\n');

describe('stellwerk.conf parsing', () => {
  it('reads KEY=value lines and skips comments and blanks', () => {
    expect(parseConf(HAND_WRITTEN)).toEqual({
      STELLWERK_HTTP_PORT: '8080',
      STELLWERK_MQTT_PORT: '1883',
      STELLWERK_LOG_LEVEL: 'debug',
      SOMETHING_ELSE: 'kept as is',
    });
  });

  it('takes the last value of a key given twice', () => {
    expect(parseConf('A=1\r\n#A=3\r\nA=2\r\n')).toEqual({ A: '2' });
  });
});

describe('stellwerk.conf update', () => {
  it('changes only the edited keys and keeps comments, unknown keys and order', () => {
    const after = updateConf(HAND_WRITTEN, {
      STELLWERK_HTTP_PORT: '9090',
      STELLWERK_PUBLIC_URL: 'https://x.example',
    });
    expect(after).toBe(
      [
        '# Stellwerk settings, written by IT',
        'STELLWERK_HTTP_PORT=9090',
        '',
        '# keep the broker on the standard port',
        'STELLWERK_MQTT_PORT = 1883',
        'STELLWERK_LOG_LEVEL=debug',
        'SOMETHING_ELSE="kept as is"',
        'STELLWERK_PUBLIC_URL=https://x.example',
        '',
      ].join('\n'),
    );
  });

  it('removes a key set to undefined, every line of it, and leaves a commented-out line alone', () => {
    const after = updateConf(
      'A=1\n# STELLWERK_HTTPS=self-signed\nSTELLWERK_HTTPS=self-signed\nB=2\nSTELLWERK_HTTPS=x\n',
      {
        STELLWERK_HTTPS: undefined,
      },
    );
    expect(after).toBe('A=1\n# STELLWERK_HTTPS=self-signed\nB=2\n');
  });

  it('collapses a duplicated key into one line at its first place', () => {
    expect(updateConf('A=1\nB=2\nA=3\n', { A: '4' })).toBe('A=4\nB=2\n');
  });

  it('keeps Windows line endings and a missing final newline stays a complete file', () => {
    expect(updateConf('# c\r\nA=1\r\n', { A: '2' })).toBe('# c\r\nA=2\r\n');
    expect(updateConf('A=1', { B: '2' })).toBe('A=1\nB=2\n');
    expect(updateConf('', { A: undefined })).toBe('');
  });

  it('quotes values with outer spaces or a leading # so they read back the same', () => {
    const after = updateConf('', { A: ' padded ', B: '#not-a-comment', C: 'C:\\certs\\a.pem' });
    expect(parseConf(after)).toEqual({ A: ' padded ', B: '#not-a-comment', C: 'C:\\certs\\a.pem' });
  });

  it('refuses a value with a line break', () => {
    expect(() => updateConf('', { A: 'x\nSTELLWERK_DATA_DIR=/tmp' })).toThrow(ConfValueError);
  });
});

describe('stellwerk.conf file', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });
  const tempDir = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stellwerk-conf-'));
    dirs.push(dir);
    return dir;
  };

  it('creates a missing file (and its directory) readable by its owner only', () => {
    const file = path.join(tempDir(), 'data', 'stellwerk.conf');
    expect(updateConfFile(file, { STELLWERK_HTTP_PORT: '8081' })).toEqual({ STELLWERK_HTTP_PORT: '8081' });
    expect(fs.readFileSync(file, 'utf8')).toBe('STELLWERK_HTTP_PORT=8081\n');
    if (process.platform !== 'win32') expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  });

  it('rewrites an existing file in place, keeping its permissions and leaving no temporary file', () => {
    const dir = tempDir();
    const file = path.join(dir, 'stellwerk.conf');
    fs.writeFileSync(file, HAND_WRITTEN, { mode: 0o640 });
    fs.chmodSync(file, 0o640);
    updateConfFile(file, { STELLWERK_MQTT_PORT: '1884' });
    expect(fs.readFileSync(file, 'utf8')).toBe(
      HAND_WRITTEN.replace('STELLWERK_MQTT_PORT = 1883', 'STELLWERK_MQTT_PORT=1884'),
    );
    if (process.platform !== 'win32') expect(fs.statSync(file).mode & 0o777).toBe(0o640);
    expect(fs.readdirSync(dir)).toEqual(['stellwerk.conf']);
  });
});
