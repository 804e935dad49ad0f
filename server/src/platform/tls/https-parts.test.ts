import fs from 'node:fs/promises';
import https from 'node:https';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type tls from 'node:tls';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.js';
import { certificateReload } from './https-parts.js';
import { createSelfSignedCertificate } from './self-signed.js';

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((dir) => fs.rm(dir, { recursive: true, force: true }))));

const pair = () =>
  createSelfSignedCertificate({
    names: ['localhost', '127.0.0.1'],
    commonName: 'reload',
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 86_400_000),
  });

/** The certificate a new connection is served (fingerprint), without trusting it. */
function servedFingerprint(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const request = https.get(
      { host: '127.0.0.1', port, rejectUnauthorized: false, agent: false },
      (response) => {
        resolve((response.socket as tls.TLSSocket).getPeerCertificate().fingerprint256);
        response.resume();
      },
    );
    request.on('error', reject);
  });
}

describe('HTTPS certificate reload', () => {
  it('serves renewed files to new connections after SIGHUP, and keeps the old one when the new files are bad', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'stellwerk-reload-'));
    dirs.push(dir);
    const config = loadConfig({
      STELLWERK_HTTPS_CERT: path.join(dir, 'cert.pem'),
      STELLWERK_HTTPS_KEY: path.join(dir, 'key.pem'),
    });
    const write = async (made: { certPem: string; keyPem: string }) => {
      await fs.writeFile(config.httpsCert!, made.certPem);
      await fs.writeFile(config.httpsKey!, made.keyPem);
    };
    const first = pair();
    await write(first);
    const server = https.createServer({ cert: first.certPem, key: first.keyPem }, (_q, r) => r.end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    const reload = certificateReload(config, server, pino({ level: 'silent' }));
    await reload.start();
    try {
      const before = await servedFingerprint(port);
      const renewed = pair();
      await write(renewed);
      process.emit('SIGHUP', 'SIGHUP');
      const deadline = Date.now() + 5000;
      let after = before;
      while (after === before && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 20));
        after = await servedFingerprint(port);
      }
      expect(after).not.toBe(before);

      await fs.writeFile(config.httpsKey!, pair().keyPem); // not the certificate's key
      process.emit('SIGHUP', 'SIGHUP');
      await new Promise((r) => setTimeout(r, 200));
      expect(await servedFingerprint(port)).toBe(after);
    } finally {
      await reload.stop();
      server.close();
    }
    expect(process.listenerCount('SIGHUP')).toBe(0);
  });
});
