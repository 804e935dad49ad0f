import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.js';
import { httpsCertificateCheck, inspect } from './https-certificate.check.js';
import { loadHttpsCertificate } from './https-certificate.js';
import { createSelfSignedCertificate } from './self-signed.js';

const DAY = 86_400_000;
const now = new Date();
let dir: string;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'stellwerk-tls-doctor-'));
});
afterAll(() => fs.rm(dir, { recursive: true, force: true }));

/** Writes a certificate valid from `fromDays` to `toDays` (relative to now) and its key; returns the config. */
async function own(
  name: string,
  options: {
    fromDays?: number;
    toDays?: number;
    names?: string[];
    otherKey?: boolean;
    keyMode?: number;
  } = {},
) {
  const made = createSelfSignedCertificate({
    names: options.names ?? ['localhost'],
    commonName: name,
    notBefore: new Date(now.getTime() + (options.fromDays ?? -1) * DAY),
    notAfter: new Date(now.getTime() + (options.toDays ?? 365) * DAY),
  });
  const cert = path.join(dir, `${name}.crt`);
  const key = path.join(dir, `${name}.key`);
  await fs.writeFile(cert, made.certPem);
  const keyPem = options.otherKey ? anotherKey() : made.keyPem;
  await fs.writeFile(key, keyPem, { mode: options.keyMode ?? 0o600 });
  return loadConfig({ STELLWERK_DATA_DIR: dir, STELLWERK_HTTPS_CERT: cert, STELLWERK_HTTPS_KEY: key });
}

const anotherKey = () =>
  createSelfSignedCertificate({ names: ['x'], commonName: 'x', notBefore: now, notAfter: now }).keyPem;

describe('doctor: tls-certificate', () => {
  it('is ok for a valid certificate, with its fingerprint and days left', async () => {
    const finding = await httpsCertificateCheck.run(await own('valid'));
    expect(finding).toMatchObject({ check: 'tls-certificate', status: 'ok', details: { daysLeft: 364 } });
    expect(JSON.stringify(finding)).toMatch(/SHA-256 ([0-9A-F]{2}:){31}[0-9A-F]{2}/);
  });

  it('warns within 30 days of expiry', async () => {
    const finding = await inspect(await own('soon', { toDays: 12 }), now);
    expect(finding).toMatchObject({ status: 'warn', details: { daysLeft: 11 } });
    expect(finding.message).toMatch(/expires in 11 days; renew it and reload Stellwerk/);
  });

  it('fails an expired certificate, one not yet valid, and a key that is not its own', async () => {
    const cases: [Parameters<typeof own>, RegExp][] = [
      [['expired', { fromDays: -400, toDays: -2 }], /the certificate expired on /],
      [['future', { fromDays: 3 }], /not valid before .*check the clock/],
      [['mismatch', { otherKey: true }], /mismatch\.key is not the private key of the certificate/],
    ];
    for (const [args, message] of cases) {
      const finding = await inspect(await own(...args), now);
      expect(finding.status, args[0]).toBe('fail');
      expect(finding.message).toMatch(message);
    }
  });

  it('fails an unreadable file, naming the variable', async () => {
    const config = await own('gone');
    await fs.rm(config.httpsCert!);
    const finding = await inspect(config, now);
    expect(finding.status).toBe('fail');
    expect(finding.message).toMatch(/^STELLWERK_HTTPS_CERT: .*gone\.crt cannot be read \(ENOENT\)/);
  });

  it('warns when the public URL is not covered and when the key file is open to others', async () => {
    const config = await own('open', { names: ['other.example'], keyMode: 0o644 });
    const finding = await inspect(config, now);
    expect(finding.status).toBe('warn');
    expect(finding.message).toMatch(/not valid for localhost \(STELLWERK_PUBLIC_URL\)/);
    expect(finding.message).toMatch(/open\.key is open to group or others \(chmod 600\)/);
  });

  it('is ok with HTTPS off, and for a self-signed certificate not made yet; then inspects the made one', async () => {
    expect(await inspect(loadConfig({ STELLWERK_DATA_DIR: dir }), now)).toMatchObject({ status: 'ok' });
    const config = loadConfig({
      STELLWERK_DATA_DIR: path.join(dir, 'fresh'),
      STELLWERK_HTTPS: 'self-signed',
    });
    expect((await inspect(config, now)).message).toMatch(/the next start makes one/);
    await loadHttpsCertificate(config, pino({ level: 'silent' }), now);
    expect(await inspect(config, now)).toMatchObject({
      status: 'ok',
      details: { selfSigned: true, daysLeft: 824 },
    });
    const late = new Date(now.getTime() + 800 * DAY);
    expect((await inspect(config, late)).message).toMatch(/renewed at the next start/);
  });
});
