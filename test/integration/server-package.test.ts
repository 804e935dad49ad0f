import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DATA_DIR,
  UNIT_FILE,
  UPGRADE_PROBE_MIGRATION,
  api,
  buildDeb,
  installedVersion,
  mustRun,
  packageKnown,
  repackNewer,
  runCommand,
  startInstalledUnit,
  type InstalledServer,
} from '../../scripts/package/installed-server.js';

/**
 * The headless server package on this machine: dpkg installs it, the unit's ExecStart runs as the
 * service user (systemd is not PID 1 here), a newer package upgrades it with the data kept, removal
 * keeps the data and purge deletes it. Needs root and dpkg (CI runs as root on Debian).
 */

const ADMIN = { email: 'it.admin@stellwerk.test', password: 'installed package admin', name: 'IT Admin' };
const NEWER_VERSION = '99.0.0';
/** Installing, starting and upgrading an installation of about 260 MB takes minutes on 2 CPUs. */
const STEP_MS = 300_000;

let work: string;
let deb: string;
let server: InstalledServer | undefined;
let connectorId: string;

beforeAll(() => {
  if (process.getuid?.() !== 0) throw new Error('the package round trip installs with dpkg and needs root');
  if (packageKnown()) {
    throw new Error('a stellwerk package is already on this machine: remove it (dpkg -P stellwerk) first');
  }
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'stellwerk-package-test-'));
  deb = buildDeb(path.join(work, 'older'));
}, STEP_MS);

afterAll(async () => {
  await server?.stop(10_000);
  // Whatever happened, leave no package, user or data behind.
  if (packageKnown()) runCommand('dpkg', ['--purge', 'stellwerk']);
  if (work) fs.rmSync(work, { recursive: true, force: true });
}, STEP_MS);

/** The real user id of a running process (Linux /proc). */
function processUid(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]);
}

/** Pids of processes whose command line mentions `text`. */
function processesMentioning(text: string): number[] {
  return fs
    .readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').includes(text);
      } catch {
        return false; // ended meanwhile
      }
    })
    .map(Number);
}

describe('the server package', () => {
  it('installs with dpkg: the service user owns the data directory, stellwerk is on the PATH', () => {
    const output = mustRun('dpkg', ['--install', deb]);
    expect(installedVersion()).toBeDefined();
    expect(output).toContain('systemd is not running here');
    expect(output).toMatch(/Setup token: /);
    expect(fs.statSync('/usr/bin/stellwerk').isFile()).toBe(true);
    const owner = mustRun('stat', ['-c', '%U:%G %a', DATA_DIR]).trim();
    expect(owner).toBe('stellwerk:stellwerk 750');
    expect(mustRun('/opt/stellwerk/node/bin/node', ['--version'])).toMatch(/^v24\./);
  });

  it('has a unit that systemd-analyze verify accepts', () => {
    // systemd-analyze comes with Debian's systemd package (.ci/apt-packages), which runs without systemd as PID 1.
    const verify = runCommand('systemd-analyze', ['verify', UNIT_FILE]);
    expect(verify.output).toBe('');
    expect(verify.status).toBe(0);
  });

  it(
    "runs the unit's ExecStart as the stellwerk user and answers /health",
    async () => {
      server = await startInstalledUnit({});
      const health = await fetch(`${server.baseUrl}/health`);
      expect(health.status).toBe(200);
      const uid = Number(mustRun('id', ['-u', 'stellwerk']).trim());
      expect(processUid(server.child.pid!)).toBe(uid);
      // The embedded PostgreSQL runs as the service user too, with its cluster in the data directory.
      const postgres = processesMentioning(`${DATA_DIR}/`).filter((pid) => pid !== server!.child.pid);
      expect(postgres.length).toBeGreaterThan(0);
      expect(postgres.map(processUid)).toEqual(postgres.map(() => uid));
    },
    STEP_MS,
  );

  it(
    'creates the first admin from the printed setup token and keeps a connector',
    async () => {
      const setupToken = server!.setupToken();
      expect(setupToken).toBeDefined();
      await api(server!.baseUrl, '/api/v1/onboarding', { body: { setupToken, ...ADMIN } });
      const { token } = await api<{ token: string }>(server!.baseUrl, '/xapi/v1/auth/login', {
        body: { email: ADMIN.email, password: ADMIN.password },
      });
      const connector = await api<{ id: string }>(server!.baseUrl, '/xapi/v1/connectors', {
        token,
        body: { title: 'kept across the upgrade', type: 'mqtt-broker' },
      });
      connectorId = connector.id;
      expect(await server!.stop()).toBe(0);
      server = undefined;
    },
    STEP_MS,
  );

  it(
    'upgrades to a newer build with the data intact and a backup made before migrating',
    async () => {
      const newer = repackNewer(deb, work, NEWER_VERSION);
      const output = mustRun('dpkg', ['--install', newer]);
      expect(output).toContain(`Stellwerk ${NEWER_VERSION}`);
      expect(installedVersion()).toBe(NEWER_VERSION);

      server = await startInstalledUnit({});
      const { token } = await api<{ token: string }>(server.baseUrl, '/xapi/v1/auth/login', {
        body: { email: ADMIN.email, password: ADMIN.password },
      });
      const connector = await api<{ title: string }>(server.baseUrl, `/xapi/v1/connectors/${connectorId}`, {
        token,
      });
      expect(connector.title).toBe('kept across the upgrade');
      expect(server.setupToken()).toBeUndefined();
      // The newer server applied the newer build's migration at its start.
      expect(server.output()).toContain(UPGRADE_PROBE_MIGRATION);
      expect(await server.stop()).toBe(0);
      server = undefined;

      // The start-up upgrade guard backed the older database up before its first migration.
      const backups = fs.readdirSync(path.join(DATA_DIR, 'backups'));
      expect(backups.some((file) => file.includes(`before-${NEWER_VERSION}`))).toBe(true);
    },
    STEP_MS,
  );

  it('keeps the data when removed, and deletes it and the user when purged', () => {
    mustRun('dpkg', ['--remove', 'stellwerk']);
    expect(installedVersion()).toBeUndefined();
    expect(fs.existsSync('/usr/bin/stellwerk')).toBe(false);
    expect(fs.existsSync(path.join(DATA_DIR, 'secret.key'))).toBe(true);

    mustRun('dpkg', ['--purge', 'stellwerk']);
    expect(fs.existsSync(DATA_DIR)).toBe(false);
    expect(runCommand('getent', ['passwd', 'stellwerk']).status).not.toBe(0);
    expect(packageKnown()).toBe(false);
  });
});
