import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runningPostmaster } from './running-postmaster.js';

describe('the running embedded PostgreSQL of a data directory', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const pidFile = async (lines: string[]) => {
    dir = await mkdtemp(path.join(tmpdir(), 'postmaster-'));
    await mkdir(path.join(dir, 'postgres'));
    await writeFile(path.join(dir, 'postgres', 'postmaster.pid'), lines.join('\n'));
    return dir;
  };

  it('reads pid and port of a live process', async () => {
    const dataDir = await pidFile([String(process.pid), '/data', '1700000000', '54321', '/tmp']);
    expect(await runningPostmaster(dataDir, { unreadable: 'throw' })).toEqual({
      pid: process.pid,
      port: 54321,
    });
  });

  it('treats a file naming a dead process, or no file, as none running', async () => {
    // Pids are below 2^22 on Linux: this one cannot exist.
    const dataDir = await pidFile(['4194304999', '/data', '1700000000', '54321']);
    expect(await runningPostmaster(dataDir, { unreadable: 'throw' })).toBeUndefined();
    expect(await runningPostmaster(path.join(dataDir, 'nowhere'), { unreadable: 'throw' })).toBeUndefined();
  });
});
