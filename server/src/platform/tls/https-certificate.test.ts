import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.js';
import { StartupError } from '../db/startup-error.js';
import { loadHttpsCertificate, readOwnCertificate, selfSignedFiles } from './https-certificate.js';
import { createSelfSignedCertificate } from './self-signed.js';

const DAY = 86_400_000;
const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((dir) => fs.rm(dir, { recursive: true, force: true }))));

async function tempDir(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'stellwerk-tls-'));
  dirs.push(dir);
  return dir;
}

/** A real pino logger whose JSON lines the test reads. */
function capturingLog() {
  const lines: { level: number; msg: string; [key: string]: unknown }[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as (typeof lines)[number]);
      done();
    },
  });
  return { log: pino({ level: 'info' }, stream), lines };
}

const selfSignedConfig = (dataDir: string, env: Record<string, string> = {}) =>
  loadConfig({ STELLWERK_DATA_DIR: dataDir, STELLWERK_HTTPS: 'self-signed', ...env });

describe('STELLWERK_HTTPS=self-signed', () => {
  it('makes a certificate on first start, key mode 600, and logs its fingerprint', async () => {
    const dataDir = await tempDir();
    const { log, lines } = capturingLog();
    const config = selfSignedConfig(dataDir, {
      STELLWERK_PUBLIC_URL: 'https://stellwerk.plant.example:8443',
    });
    const certificate = (await loadHttpsCertificate(config, log))!;

    const files = selfSignedFiles(dataDir);
    expect(certificate).toMatchObject({ source: 'self-signed', certFile: files.cert, keyFile: files.key });
    expect((await fs.stat(files.key)).mode & 0o777).toBe(0o600);
    expect((await fs.stat(files.dir)).mode & 0o777).toBe(0o700);
    expect(await fs.readFile(files.cert)).toEqual(certificate.cert);
    const names = certificate.facts.names;
    for (const name of ['localhost', '127.0.0.1', os.hostname().toLowerCase(), 'stellwerk.plant.example'])
      expect(names).toContain(name);
    expect(certificate.facts.daysLeft).toBe(824);
    expect(lines.map((l) => l.msg)).toContain('made a self-signed HTTPS certificate');
    expect(lines.map((l) => l.msg)).toContain(
      `HTTPS certificate SHA-256 fingerprint ${certificate.facts.fingerprint256}`,
    );
  });

  it('keeps it across starts, and logs the same fingerprint each time', async () => {
    const dataDir = await tempDir();
    const first = (await loadHttpsCertificate(selfSignedConfig(dataDir), capturingLog().log))!;
    const { log, lines } = capturingLog();
    const second = (await loadHttpsCertificate(selfSignedConfig(dataDir), log))!;
    expect(second.facts.fingerprint256).toBe(first.facts.fingerprint256);
    expect(lines.map((l) => l.msg)).toEqual([
      `HTTPS certificate SHA-256 fingerprint ${first.facts.fingerprint256}`,
    ]);
  });

  it('renews it 30 days before it expires, and when the public URL names a host it lacks', async () => {
    const dataDir = await tempDir();
    const first = (await loadHttpsCertificate(selfSignedConfig(dataDir), capturingLog().log))!;
    const late = new Date(first.facts.validTo.getTime() - 29 * DAY);
    const { log, lines } = capturingLog();
    const renewed = (await loadHttpsCertificate(selfSignedConfig(dataDir), log, late))!;
    expect(renewed.facts.fingerprint256).not.toBe(first.facts.fingerprint256);
    expect(renewed.facts.validTo.getTime()).toBe(late.getTime() + 825 * DAY);
    expect(lines.find((l) => l.level === 40)?.msg).toMatch(
      /new self-signed HTTPS certificate \(it expires in 29 days\)/,
    );

    const moved = selfSignedConfig(dataDir, { STELLWERK_PUBLIC_URL: 'https://10.20.30.40' });
    const forNewHost = (await loadHttpsCertificate(moved, capturingLog().log, late))!;
    expect(forNewHost.facts.fingerprint256).not.toBe(renewed.facts.fingerprint256);
    expect(forNewHost.facts.names).toContain('10.20.30.40');
  });

  it('replaces a damaged certificate file', async () => {
    const dataDir = await tempDir();
    const first = (await loadHttpsCertificate(selfSignedConfig(dataDir), capturingLog().log))!;
    await fs.writeFile(first.certFile, 'not a certificate');
    const second = (await loadHttpsCertificate(selfSignedConfig(dataDir), capturingLog().log))!;
    expect(second.facts.keyMatches).toBe(true);
  });
});

describe('STELLWERK_HTTPS_CERT and STELLWERK_HTTPS_KEY', () => {
  const now = new Date();
  const pair = () =>
    createSelfSignedCertificate({
      names: ['stellwerk.example'],
      commonName: 'own',
      notBefore: new Date(now.getTime() - DAY),
      notAfter: new Date(now.getTime() + 10 * DAY),
    });

  it('serves the files, warning about a near expiry and a public URL they do not cover', async () => {
    const dir = await tempDir();
    const { certPem, keyPem } = pair();
    await fs.writeFile(path.join(dir, 'cert.pem'), certPem);
    await fs.writeFile(path.join(dir, 'key.pem'), keyPem);
    const { log, lines } = capturingLog();
    const config = loadConfig({
      STELLWERK_DATA_DIR: dir,
      STELLWERK_HTTPS_CERT: path.join(dir, 'cert.pem'),
      STELLWERK_HTTPS_KEY: path.join(dir, 'key.pem'),
    });
    const certificate = (await loadHttpsCertificate(config, log))!;
    expect(certificate.source).toBe('files');
    expect(lines.filter((l) => l.level === 40).map((l) => l.msg)).toEqual([
      'the HTTPS certificate expires in 9 days',
      'the HTTPS certificate is not valid for localhost (STELLWERK_PUBLIC_URL)',
    ]);
  });

  it("stops the start when the key is not the certificate's, or a file is missing", async () => {
    const dir = await tempDir();
    await fs.writeFile(path.join(dir, 'cert.pem'), pair().certPem);
    await fs.writeFile(path.join(dir, 'other-key.pem'), pair().keyPem);
    const mismatch = readOwnCertificate(path.join(dir, 'cert.pem'), path.join(dir, 'other-key.pem'), now);
    await expect(mismatch).rejects.toThrow(StartupError);
    await expect(mismatch).rejects.toThrow(
      /STELLWERK_HTTPS_KEY .* is not the private key of the certificate/,
    );
    await expect(
      readOwnCertificate(path.join(dir, 'none.pem'), path.join(dir, 'other-key.pem'), now),
    ).rejects.toThrow(/STELLWERK_HTTPS_CERT .*none\.pem cannot be read \(ENOENT\)/);
    await expect(
      readOwnCertificate(path.join(dir, 'other-key.pem'), path.join(dir, 'other-key.pem'), now),
    ).rejects.toThrow(/not a PEM certificate/);
  });
});
