import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parsePackageList } from './ensure-system-packages.mjs';

describe('.ci/apt-packages', () => {
  it('reads one package per line, skipping comments, blanks and duplicates', () => {
    expect(
      parsePackageList('# test peers\nmosquitto\n\n  chromium  # e2e\nmosquitto\r\nlibfoo1.2+dfsg\n'),
    ).toEqual(['mosquitto', 'chromium', 'libfoo1.2+dfsg']);
  });

  it('refuses something that is not a package name rather than passing it to apt-get', () => {
    expect(() => parsePackageList('mosquitto; rm -rf /')).toThrow(/not a Debian package name/);
    expect(() => parsePackageList('-y')).toThrow(/not a Debian package name/);
  });

  it('parses the committed list', () => {
    const text = fs.readFileSync(path.resolve(import.meta.dirname, '..', '.ci', 'apt-packages'), 'utf8');
    expect(() => parsePackageList(text)).not.toThrow();
  });
});
