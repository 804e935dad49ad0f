import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { openFileLimit, parseProcLimits, readShellLimits } from './open-files.js';

const run = promisify(execFile);

describe('openFileLimit', () => {
  it('reads the Max open files row of /proc/<pid>/limits', () => {
    const text = [
      'Limit                     Soft Limit           Hard Limit           Units     ',
      'Max processes             63429                63429                processes ',
      'Max open files            1024                 524288               files     ',
    ].join('\n');
    expect(parseProcLimits(text)).toEqual({ soft: 1024, hard: 524288 });
    expect(parseProcLimits(text.replace('524288', 'unlimited'))).toEqual({ soft: 1024, hard: null });
    expect(parseProcLimits('Max processes 1 1 processes')).toBeUndefined();
  });

  it.runIf(process.platform === 'linux')(
    'agrees with what a shell started by this process reports',
    async () => {
      const limit = await openFileLimit();
      expect(limit).not.toBeNull();
      expect(await readShellLimits()).toEqual(limit);
    },
  );

  // The server relies on this instead of raising the limit itself (open-files.ts says why).
  it.runIf(process.platform === 'linux')('is raised to the hard limit by Node itself at start', async () => {
    const { stdout } = await run(
      '/bin/sh',
      [
        '-c',
        `ulimit -n 2048 && ulimit -S -n 256 && exec "${process.execPath}" -e 'process.stdout.write(require("fs").readFileSync("/proc/self/limits", "utf8"))'`,
      ],
      { timeout: 10_000 },
    );
    expect(parseProcLimits(stdout)).toEqual({ soft: 2048, hard: 2048 });
  });
});
