import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  attachOrStart,
  desktopSettings,
  probeHealth,
  watchHealth,
  type DesktopSettings,
  type ServerHealth,
} from './server-host.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });

/** A real HTTP server in this process answering /health the given way. */
async function healthServer(status: number, body: unknown): Promise<string> {
  const server = http.createServer((_request, response) => {
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
}

const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stellwerk-host-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
};

/** A stand-in server process: answers /health on STELLWERK_HTTP_PORT and records how it stopped. */
const FAKE_SERVER = `
  const fs = require('node:fs');
  fs.writeFileSync(process.env.MARKER_DIR + '/pid', String(process.pid));
  const server = require('node:http').createServer((q, r) => r.end(JSON.stringify({ status: 'ok' })));
  setTimeout(() => server.listen(Number(process.env.STELLWERK_HTTP_PORT), process.env.STELLWERK_HTTP_HOST), 300);
  process.on('SIGTERM', () => { fs.writeFileSync(process.env.MARKER_DIR + '/stopped', 'SIGTERM'); process.exit(0); });
`;

async function localSettings(script: string, markerDir: string): Promise<DesktopSettings> {
  const port = await freePort();
  const settings = desktopSettings({
    env: { STELLWERK_HTTP_PORT: String(port), STELLWERK_NODE: process.execPath, MARKER_DIR: markerDir },
    isPackaged: false,
    resourcesPath: '',
    appPath: markerDir,
    platform: process.platform,
  });
  return { ...settings, spawn: { ...settings.spawn!, args: ['-e', script] } };
}

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('desktopSettings', () => {
  const base = {
    isPackaged: false,
    resourcesPath: '/opt/Stellwerk/resources',
    appPath: '/src/stellwerk',
    platform: 'linux' as const,
  };

  it('uses this machine on port 8080 and starts the built server with node on loopback', () => {
    const settings = desktopSettings({ ...base, env: {} });
    expect(settings.url).toBe('http://127.0.0.1:8080');
    expect(settings.spawn).toMatchObject({
      command: 'node',
      args: [
        '--max-semi-space-size=64',
        '--v8-pool-size=0',
        path.join('/src/stellwerk', 'dist', 'server', 'src', 'main.js'),
      ],
      cwd: '/src/stellwerk',
    });
    expect(settings.spawn?.env).toMatchObject({
      STELLWERK_HTTP_PORT: '8080',
      STELLWERK_HTTP_HOST: '127.0.0.1',
      STELLWERK_PUBLIC_URL: 'http://localhost:8080',
    });
  });

  it('follows STELLWERK_HTTP_PORT and keeps an explicit host', () => {
    const settings = desktopSettings({
      ...base,
      env: { STELLWERK_HTTP_PORT: '9000', STELLWERK_HTTP_HOST: '0.0.0.0' },
    });
    expect(settings.url).toBe('http://127.0.0.1:9000');
    expect(settings.spawn?.env.STELLWERK_HTTP_HOST).toBe('0.0.0.0');
  });

  it('takes port, host and public URL from stellwerk.conf under the environment, and passes the data directory', () => {
    const conf = {
      STELLWERK_HTTP_PORT: '9191',
      STELLWERK_PUBLIC_URL: 'https://plant.example.com',
      STELLWERK_HTTP_HOST: '0.0.0.0',
    };
    const fromFile = desktopSettings({ ...base, env: {}, conf, dataDir: '/srv/stellwerk' });
    expect(fromFile.url).toBe('http://127.0.0.1:9191');
    expect(fromFile.spawn?.env).toMatchObject({
      STELLWERK_DATA_DIR: '/srv/stellwerk',
      STELLWERK_HTTP_PORT: '9191',
      STELLWERK_HTTP_HOST: '0.0.0.0',
      STELLWERK_PUBLIC_URL: 'https://plant.example.com',
    });
    const envWins = desktopSettings({
      ...base,
      env: { STELLWERK_HTTP_PORT: '9292', STELLWERK_DATA_DIR: '/data' },
      conf,
      dataDir: '/srv/stellwerk',
    });
    expect(envWins.url).toBe('http://127.0.0.1:9292');
    expect(envWins.spawn?.env).toMatchObject({ STELLWERK_DATA_DIR: '/data', STELLWERK_HTTP_PORT: '9292' });
  });

  it('runs the bundled Node runtime when packaged', () => {
    const settings = desktopSettings({ ...base, isPackaged: true, platform: 'win32', env: {} });
    expect(settings.spawn?.command).toBe(path.join('/opt/Stellwerk/resources', 'node', 'bin', 'node.exe'));
    expect(settings.spawn?.cwd).toBe(path.join('/opt/Stellwerk/resources', 'app'));
  });

  it('never starts anything for a remote STELLWERK_URL', () => {
    const settings = desktopSettings({ ...base, env: { STELLWERK_URL: 'https://iot.example.com/' } });
    expect(settings).toEqual({ url: 'https://iot.example.com', spawn: undefined, certFile: undefined });
  });
});

describe('probeHealth', () => {
  it("accepts only Stellwerk's 200 {status: ok}", async () => {
    expect(await probeHealth(await healthServer(200, { status: 'ok' }))).toBe(true);
    expect(await probeHealth(await healthServer(200, { hello: 'other program' }))).toBe(false);
    expect(await probeHealth(await healthServer(503, { status: 'ok' }))).toBe(false);
    expect(await probeHealth(`http://127.0.0.1:${await freePort()}`)).toBe(false);
  });
});

describe('watchHealth', () => {
  it('reports running, then not answering once the server goes away, and nothing after stop', async () => {
    const server = http.createServer((_request, response) => response.end(JSON.stringify({ status: 'ok' })));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
    const seen: ServerHealth[] = [];
    const stop = watchHealth(url, (health) => seen.push(health), 50);
    cleanups.push(stop);
    await expect.poll(() => seen, { timeout: 5000 }).toEqual(['running']);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await expect.poll(() => seen, { timeout: 5000 }).toEqual(['running', 'not-answering']);
    stop();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(seen).toEqual(['running', 'not-answering']);
  });
});

describe('attachOrStart', () => {
  it('attaches to a server that already answers and starts nothing', async () => {
    const url = await healthServer(200, { status: 'ok' });
    const spawn = { command: '/nonexistent/node', args: [], env: {}, cwd: '/' };
    const handle = await attachOrStart({ settings: { url, spawn, certFile: undefined } });
    expect(handle).toMatchObject({ url, mode: 'attached' });
    await handle.stop();
    expect(await probeHealth(url)).toBe(true);
  });

  it('starts the server as a child process, waits for health, and stops it with SIGTERM', async () => {
    const markers = tempDir();
    const settings = await localSettings(FAKE_SERVER, markers);
    const handle = await attachOrStart({ settings, startTimeoutMs: 10_000 });
    cleanups.push(() => handle.stop());
    expect(handle.mode).toBe('started');
    expect(await probeHealth(settings.url)).toBe(true);

    await handle.stop();
    expect(fs.readFileSync(path.join(markers, 'stopped'), 'utf8')).toBe('SIGTERM');
    expect(isAlive(Number(fs.readFileSync(path.join(markers, 'pid'), 'utf8')))).toBe(false);
    expect(await probeHealth(settings.url)).toBe(false);
  });

  it('reports a server that exits during start, with its last output', async () => {
    const settings = await localSettings(
      `console.error('Stellwerk cannot start: port taken'); process.exit(3);`,
      tempDir(),
    );
    await expect(attachOrStart({ settings, startTimeoutMs: 10_000 })).rejects.toThrow(
      /exited during start \(3\):\nStellwerk cannot start: port taken/,
    );
  });

  it('gives up after the timeout and kills a server that never becomes healthy, even if it ignores SIGTERM', async () => {
    const markers = tempDir();
    const script = `require('node:fs').writeFileSync(process.env.MARKER_DIR + '/pid', String(process.pid));
      process.on('SIGTERM', () => {}); setInterval(() => {}, 1000);`;
    const settings = await localSettings(script, markers);
    await expect(attachOrStart({ settings, startTimeoutMs: 1000, stopGraceMs: 300 })).rejects.toThrow(
      /did not answer .* within 1000 ms/,
    );
    expect(isAlive(Number(fs.readFileSync(path.join(markers, 'pid'), 'utf8')))).toBe(false);
  });

  it('says so when the runtime cannot be executed', async () => {
    const settings = await localSettings('', tempDir());
    settings.spawn!.command = path.join(os.tmpdir(), 'no-such-node-runtime');
    await expect(attachOrStart({ settings, startTimeoutMs: 5000 })).rejects.toThrow(
      /could not be started .*ENOENT/,
    );
  });

  it('refuses to start a remote server that does not answer', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    await expect(attachOrStart({ settings: { url, spawn: undefined, certFile: undefined } })).rejects.toThrow(
      /cannot be started from here/,
    );
  });
});
