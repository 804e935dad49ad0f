import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyArchive } from '../../server/src/backup/archive.js';
import { checkLastBackup } from '../../server/src/backup/backup.doctor.js';
import { BackupScheduler } from '../../server/src/backup/backup.schedule.js';
import { caller, expectStatus, login, type ListBody } from './support/identity.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * Scheduled backups: the schedule queues one `backup` job per scheduled time however many nodes
 * ask, the job writes an archive into the backup directory and prunes beyond the count to keep,
 * and `/metrics` and `stellwerk doctor` report the last success.
 */

let t: TestApp;
let dataDir: string;
let call: ReturnType<typeof caller>;

const OLD = ['stellwerk-backup-20200101T020000Z.tar.gz', 'stellwerk-backup-20200102T020000Z.tar.gz'];
const BEFORE_UPGRADE = 'stellwerk-backup-20190101T020000Z-before-0.2.0.tar.gz';

beforeAll(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'stellwerk-backup-schedule-'));
  await fs.writeFile(path.join(dataDir, 'secret.key'), randomBytes(32).toString('base64'), { mode: 0o600 });
  await fs.mkdir(path.join(dataDir, 'backups'));
  for (const name of [...OLD, BEFORE_UPGRADE]) await fs.writeFile(path.join(dataDir, 'backups', name), 'old');
  t = await createTestApp({
    env: {
      STELLWERK_DATA_DIR: dataDir,
      STELLWERK_BACKUP_SCHEDULE: '0 2 * * *',
      STELLWERK_BACKUP_KEEP: '2',
    },
  });
  call = caller(t, { authorization: `Bearer ${await login(t)}` });
}, 120_000);
afterAll(async () => {
  await t?.close();
  await fs.rm(dataDir, { recursive: true, force: true });
});

describe('scheduled backups', () => {
  it('runs as one job per scheduled time, keeps the newest archives and reports the last success', async () => {
    const scheduler = t.ctx.lifecycle.find((part) => part instanceof BackupScheduler);
    expect(scheduler, 'STELLWERK_BACKUP_SCHEDULE adds the scheduler').toBeInstanceOf(BackupScheduler);
    const at = new Date();
    const job = await scheduler!.enqueue(at);
    expect(job).not.toBeNull();
    // A second node reaching the same time finds the job already queued.
    expect(await scheduler!.enqueue(at)).toBeNull();
    await t.services.jobs.runner.runOnce();

    const jobs = expectStatus<
      ListBody<{ id: string; status: string; result: { file: string; pruned: string[] } }>
    >(await call('GET', '/xapi/v1/jobs?type=backup'), 200);
    expect(jobs.data).toHaveLength(1);
    expect(jobs.data[0]).toMatchObject({ id: job!.id, status: 'finished' });
    const { file, pruned } = jobs.data[0]!.result;
    expect(path.dirname(file)).toBe(path.join(dataDir, 'backups'));
    expect((await verifyArchive(file)).reason).toBe('scheduled');
    expect(pruned).toEqual([OLD[0]]);
    expect((await fs.readdir(path.join(dataDir, 'backups'))).sort()).toEqual(
      [BEFORE_UPGRADE, OLD[1]!, path.basename(file)].sort(),
    );

    const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
    const line = metrics.body
      .split('\n')
      .find((l) => l.startsWith('stellwerk_backup_last_success_timestamp_seconds'));
    expect(Number(line?.split(' ')[1])).toBeGreaterThan(at.getTime() / 1000 - 5);

    expect(await checkLastBackup(t.config)).toMatchObject({ check: 'backup', status: 'ok' });
    // Three days later with a daily schedule, the scheduled backups have been failing.
    const later = new Date(Date.now() + 3 * 24 * 3600_000);
    expect(await checkLastBackup(t.config, later)).toMatchObject({ status: 'fail' });
  }, 60_000);
});
