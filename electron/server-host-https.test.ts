import fs from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSelfSignedCertificate } from '../server/src/platform/tls/self-signed.js';
import {
  attachOrStart,
  desktopSettings,
  probeHealth,
  watchHealth,
  type ServerHealth,
} from './server-host.js';

/** The health probe against real HTTPS servers on loopback, with certificates from the server's generator. */

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stellwerk-probe-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
};

const certificate = (names: string[]) =>
  createSelfSignedCertificate({
    names,
    commonName: 'Stellwerk test',
    notBefore: new Date(Date.now() - 3_600_000),
    notAfter: new Date(Date.now() + 86_400_000),
  });

const writeFile = (dir: string, name: string, text: string) => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
};

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });

/** A real HTTPS server answering /health like Stellwerk, with the given certificate. */
async function httpsHealthServer(cert: { certPem: string; keyPem: string }): Promise<string> {
  const server = https.createServer({ cert: cert.certPem, key: cert.keyPem }, (_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return `https://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
}

describe('probeHealth over HTTPS', () => {
  it("answers only with the server's own certificate as the trusted one", async () => {
    const dir = tempDir();
    const own = certificate(['localhost', '127.0.0.1', '::1']);
    const url = await httpsHealthServer(own);
    expect(await probeHealth(url, 2000, writeFile(dir, 'own.pem', own.certPem))).toBe(true);
    const different = certificate(['localhost', '127.0.0.1', '::1']);
    expect(await probeHealth(url, 2000, writeFile(dir, 'other.pem', different.certPem))).toBe(false);
    // Without the file the system's trust applies, which knows no self-signed certificate.
    expect(await probeHealth(url, 2000)).toBe(false);
    // Before the server made its certificate there is nothing to trust yet.
    expect(await probeHealth(url, 2000, path.join(dir, 'missing.pem'))).toBe(false);
  });

  it('accepts an operator certificate that names another host than 127.0.0.1', async () => {
    const dir = tempDir();
    const operator = certificate(['plant.example.com']);
    const url = await httpsHealthServer(operator);
    expect(await probeHealth(url, 2000, writeFile(dir, 'cert.pem', operator.certPem))).toBe(true);
  });

  it('reports the tray status with the trusted certificate', async () => {
    const dir = tempDir();
    const own = certificate(['127.0.0.1']);
    const url = await httpsHealthServer(own);
    const seen: ServerHealth[] = [];
    const stop = watchHealth(url, (health) => seen.push(health), 50, writeFile(dir, 'own.pem', own.certPem));
    cleanups.push(stop);
    await expect.poll(() => seen).toEqual(['running']);
  });
});

/** A stand-in for a first start with STELLWERK_HTTPS=self-signed: writes its certificate, then serves. */
const SELF_SIGNED_SERVER = `
  const fs = require('node:fs');
  const path = require('node:path');
  const dir = path.join(process.env.STELLWERK_DATA_DIR, 'tls');
  setTimeout(() => {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'self-signed-cert.pem'), process.env.TEST_CERT);
    require('node:https')
      .createServer({ cert: process.env.TEST_CERT, key: process.env.TEST_KEY }, (q, r) => r.end('{"status":"ok"}'))
      .listen(Number(process.env.STELLWERK_HTTP_PORT), process.env.STELLWERK_HTTP_HOST);
  }, 300);
  process.on('SIGTERM', () => process.exit(0));
`;

describe('attachOrStart with HTTPS', () => {
  it('starts the server and waits for the certificate it makes in the data directory', async () => {
    const dataDir = tempDir();
    const own = certificate(['localhost', '127.0.0.1', '::1']);
    const settings = desktopSettings({
      env: {
        STELLWERK_HTTPS: 'self-signed',
        STELLWERK_HTTP_PORT: String(await freePort()),
        STELLWERK_NODE: process.execPath,
        TEST_CERT: own.certPem,
        TEST_KEY: own.keyPem,
      },
      dataDir,
      isPackaged: false,
      resourcesPath: '',
      appPath: dataDir,
      platform: process.platform,
    });
    expect(settings.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const handle = await attachOrStart({
      settings: { ...settings, spawn: { ...settings.spawn!, args: ['-e', SELF_SIGNED_SERVER] } },
      startTimeoutMs: 10_000,
    });
    cleanups.push(() => handle.stop());
    expect(handle).toMatchObject({
      mode: 'started',
      certFile: path.join(dataDir, 'tls', 'self-signed-cert.pem'),
    });
    expect(await probeHealth(handle.url, 2000, handle.certFile)).toBe(true);
  });
});
