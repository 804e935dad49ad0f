import { readFile } from 'node:fs/promises';
import path from 'node:path';

/** A live embedded PostgreSQL of a data directory, from its `postmaster.pid`. */
export interface RunningPostmaster {
  pid: number;
  port: number;
}

/**
 * The embedded PostgreSQL running on `dataDir`, or undefined when none is. `postmaster.pid` lines:
 * pid, data directory, start time, port, … A file naming a dead process is what a crash leaves
 * behind; PostgreSQL itself treats it as stale.
 *
 * A file that exists but cannot be read (the server runs as another user) is `unreadable: 'throw'`
 * for commands that would otherwise start a second cluster on the same directory (backup, restore),
 * and `'absent'` for probes that only report (doctor).
 */
export async function runningPostmaster(
  dataDir: string,
  { unreadable }: { unreadable: 'throw' | 'absent' },
): Promise<RunningPostmaster | undefined> {
  const file = path.join(dataDir, 'postgres', 'postmaster.pid');
  let lines: string[];
  try {
    lines = (await readFile(file, 'utf8')).split('\n');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || unreadable === 'absent') return undefined;
    throw new Error(`cannot read ${file} (${code}); run this command as the user the server runs as`, {
      cause: error,
    });
  }
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || pid <= 0 || !processAlive(pid)) return undefined;
  if (!Number.isInteger(port) || port <= 0) return undefined;
  return { pid, port };
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to another user (the `postgres` user when the server runs as root).
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
