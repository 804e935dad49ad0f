import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../config.js';
import { checkLastBackup } from './backup.doctor.js';
import { archiveName, beforeUpgradeSuffix } from './backup.manifest.js';
import { pruneArchives } from './backup.schedule.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'stellwerk-backup-doctor-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const HOUR = 3600_000;
const now = new Date('2026-11-26T12:00:00Z');

function configWith(name: string, env: Record<string, string> = {}) {
  const dir = path.join(root, name);
  return loadConfig({ STELLWERK_DATA_DIR: dir, STELLWERK_BACKUP_DIR: dir, ...env });
}

describe('doctor: last backup', () => {
  it('warns without any archive, naming the command and the schedule variable', async () => {
    const finding = await checkLastBackup(configWith('none'), now);
    expect(finding).toMatchObject({ check: 'backup', status: 'warn' });
    expect(finding.message).toMatch(/stellwerk backup.*STELLWERK_BACKUP_SCHEDULE/);
  });

  it('with a daily schedule: ok within two days, a failure beyond', async () => {
    const config = configWith('daily', { STELLWERK_BACKUP_SCHEDULE: '0 2 * * *' });
    mkdirSync(config.backupDir, { recursive: true });
    writeFileSync(path.join(config.backupDir, archiveName(new Date(now.getTime() - 30 * HOUR))), 'x');
    expect(await checkLastBackup(config, now)).toMatchObject({ status: 'ok' });
    expect(await checkLastBackup(config, new Date(now.getTime() + 24 * HOUR))).toMatchObject({
      status: 'fail',
    });
  });

  it('without a schedule: an archive older than a week is a warning, not a failure', async () => {
    const config = configWith('manual');
    mkdirSync(config.backupDir, { recursive: true });
    writeFileSync(path.join(config.backupDir, archiveName(new Date(now.getTime() - 8 * 24 * HOUR))), 'x');
    expect(await checkLastBackup(config, now)).toMatchObject({ status: 'warn' });
  });
});

describe('pruning', () => {
  it('keeps the newest, never a pre-upgrade archive, and removes partial files only when stale', async () => {
    const dir = path.join(root, 'prune');
    mkdirSync(dir, { recursive: true });
    const names = [1, 2, 3].map((day) => archiveName(new Date(Date.UTC(2026, 0, day))));
    const upgrade = archiveName(new Date(Date.UTC(2025, 0, 1)), beforeUpgradeSuffix('0.2.0'));
    const stale = `${archiveName(new Date(Date.UTC(2025, 5, 1)))}.partial`;
    const fresh = `${archiveName(now)}.partial`;
    for (const name of [...names, upgrade, stale, fresh, 'notes.txt'])
      writeFileSync(path.join(dir, name), 'x');
    utimesSync(
      path.join(dir, stale),
      new Date(now.getTime() - 48 * HOUR),
      new Date(now.getTime() - 48 * HOUR),
    );
    utimesSync(path.join(dir, fresh), now, now);
    expect(await pruneArchives(dir, 2, now)).toEqual([names[0]]);
    expect(
      [upgrade, names[1]!, names[2]!, fresh, 'notes.txt'].every((n) => existsSync(path.join(dir, n))),
    ).toBe(true);
    expect(existsSync(path.join(dir, stale))).toBe(false);
  });
});
