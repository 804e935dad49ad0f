import fs from 'node:fs/promises';
import https from 'node:https';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DoctorFinding } from '../../server/src/cli/doctor-check.js';
import { createSelfSignedCertificate } from '../../server/src/platform/tls/self-signed.js';
import { runStellwerk } from './support/cli-process.js';
import { tempDataDir } from './support/server-process.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * `stellwerk doctor` run as the real command: it fails on a port another process holds and on a
 * data directory it cannot write, accepts ports held by this Stellwerk, and reports the database.
 */

interface DoctorReport {
  ok: boolean;
  findings: DoctorFinding[];
  settings: { name: string; value: string; source: string }[];
}

let t: TestApp;
let httpPort: number;
let dataDir: string;

beforeAll(async () => {
  t = await createTestApp();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  httpPort = (t.app.server.address() as net.AddressInfo).port;
  dataDir = await tempDataDir('stellwerk-doctor-');
});
afterAll(async () => {
  await t?.close();
  if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
});

function doctorEnv(env: Record<string, string> = {}): Record<string, string> {
  return {
    STELLWERK_DATA_DIR: dataDir,
    DATABASE_URL: t.config.databaseUrl!,
    STELLWERK_HTTP_HOST: '127.0.0.1',
    STELLWERK_MQTT_HOST: '127.0.0.1',
    STELLWERK_MQTT_PORT: '0',
    ...env,
  };
}

async function doctor(args: string[], env: Record<string, string>, asUser?: { user: string; group: string }) {
  const run = await runStellwerk(['doctor', '--json', ...args], env, asUser ? { asUser } : {});
  return { code: run.code, report: JSON.parse(run.stdout) as DoctorReport, stderr: run.stderr };
}

const finding = (report: DoctorReport, check: string) => report.findings.filter((f) => f.check === check);

describe('stellwerk doctor', () => {
  it('passes on a working installation, with ports held by this server, and shows where settings came from', async () => {
    await fs.writeFile(path.join(dataDir, 'stellwerk.conf'), 'STELLWERK_NODE_NAME=doctor-node\n');
    const { code, report } = await doctor([], doctorEnv({ STELLWERK_HTTP_PORT: String(httpPort) }));
    expect(report.findings.filter((f) => f.status === 'fail')).toEqual([]);
    expect(code).toBe(0);
    expect(finding(report, 'ports')).toEqual([
      expect.objectContaining({
        status: 'ok',
        details: expect.objectContaining({ port: httpPort, heldBy: 'stellwerk' }) as unknown,
      }),
    ]);
    expect(finding(report, 'database')[0]!.message).toMatch(/reachable, PostgreSQL 18/);
    expect(finding(report, 'migrations')[0]!.status).toBe('ok');
    expect(finding(report, 'clock')[0]!.status).toBe('ok');
    const settings = Object.fromEntries(report.settings.map((s) => [s.name, s]));
    expect(settings.STELLWERK_NODE_NAME).toMatchObject({ value: 'doctor-node', source: 'file' });
    expect(settings.STELLWERK_HTTP_PORT).toMatchObject({ value: String(httpPort), source: 'env' });
    expect(settings.STELLWERK_PACKET_HISTORY_LIMIT).toMatchObject({ source: 'default' });
    expect(settings.DATABASE_URL!.value).not.toContain(new URL(t.config.databaseUrl!).password || '\u0000');
  });

  it('recognises this Stellwerk on its port when it serves HTTPS', async () => {
    const day = 24 * 3600 * 1000;
    const { certPem, keyPem } = createSelfSignedCertificate({
      names: ['localhost', '127.0.0.1'],
      commonName: 'localhost',
      notBefore: new Date(Date.now() - day),
      notAfter: new Date(Date.now() + 90 * day),
    });
    const cert = path.join(dataDir, 'doctor-cert.pem');
    const key = path.join(dataDir, 'doctor-key.pem');
    await fs.writeFile(cert, certPem);
    await fs.writeFile(key, keyPem, { mode: 0o600 });
    // The test server's health answer, served over TLS on a port of its own.
    const tlsServer = https.createServer({ cert: certPem, key: keyPem }, (request, response) => {
      void t.app.inject({ method: 'GET', url: request.url ?? '/' }).then((answer) => {
        response.writeHead(answer.statusCode, { 'content-type': 'application/json' }).end(answer.body);
      });
    });
    await new Promise<void>((resolve) => tlsServer.listen(0, '127.0.0.1', resolve));
    const port = (tlsServer.address() as net.AddressInfo).port;
    try {
      const env = doctorEnv({
        STELLWERK_HTTP_PORT: String(port),
        STELLWERK_HTTPS: 'on',
        STELLWERK_HTTPS_CERT: cert,
        STELLWERK_HTTPS_KEY: key,
        STELLWERK_PUBLIC_URL: `https://localhost:${port}`,
      });
      const { code, report } = await doctor(['--only', 'ports,tls-certificate'], env);
      expect(finding(report, 'ports')).toEqual([
        expect.objectContaining({
          status: 'ok',
          details: expect.objectContaining({ port, heldBy: 'stellwerk' }) as unknown,
        }),
      ]);
      expect(finding(report, 'tls-certificate')[0]!.status).toBe('ok');
      expect(code).toBe(0);
    } finally {
      await new Promise((resolve) => tlsServer.close(resolve));
    }
  });

  it('fails on a port held by another process, and passes once it is free', async () => {
    // Reads what it is sent (doctor asks it for /xapi/v1/health), so it sees the client go and can close.
    const other = net.createServer((socket) => socket.on('error', () => {}).resume());
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const port = (other.address() as net.AddressInfo).port;
    const env = doctorEnv({ STELLWERK_HTTP_PORT: String(port) });
    const held = await doctor(['--only', 'ports'], env);
    await new Promise((resolve) => other.close(resolve));
    expect(held.code).toBe(1);
    expect(finding(held.report, 'ports')).toEqual([
      expect.objectContaining({
        status: 'fail',
        message: expect.stringContaining(
          `STELLWERK_HTTP_PORT ${port} on 127.0.0.1 is held by another process`,
        ) as string,
      }),
    ]);
    expect((await doctor(['--only', 'ports'], env)).code).toBe(0);
  });

  it('fails on a data directory whose path runs through a file (as root)', async () => {
    const file = path.join(dataDir, 'not-a-folder');
    await fs.writeFile(file, '');
    const { code, report } = await doctor(
      ['--only', 'data-dir'],
      doctorEnv({ STELLWERK_DATA_DIR: path.join(file, 'data') }),
    );
    expect(code).toBe(1);
    expect(finding(report, 'data-dir')[0]).toMatchObject({
      status: 'fail',
      message: expect.stringContaining('a part of that path is a file') as string,
    });
  });

  it('fails on a data directory the user may not write (as nobody), and passes as its owner', async () => {
    const env = doctorEnv();
    const asNobody = await doctor(['--only', 'data-dir'], env, { user: 'nobody', group: 'nogroup' });
    expect(asNobody.code).toBe(1);
    expect(finding(asNobody.report, 'data-dir')[0]).toMatchObject({
      status: 'fail',
      message: expect.stringContaining('this user may not write there') as string,
    });
    const asOwner = await doctor(['--only', 'data-dir'], env);
    expect(asOwner.code).toBe(0);
    expect(finding(asOwner.report, 'data-dir')[0]!.status).toBe('ok');
  });
});
