import fs from 'node:fs/promises';
import path from 'node:path';
import type { DoctorCheck } from '../doctor-check.js';

/**
 * The packet spool (ingest/spool): its folder writable, and how many segment files and bytes it
 * holds. The ingest worker deletes a segment once PostgreSQL holds all its packets, so many bytes
 * here mean a backlog (the database was down or slow) that the next start replays.
 */

/** Segments rotate at 64 MiB and closed ones go once committed: more than two is a backlog. */
const BACKLOG_SEGMENTS = 2;

export const spoolCheck: DoctorCheck = {
  name: 'spool',
  async run(config) {
    const dir = config.spoolDir;
    let names: string[];
    try {
      names = (await fs.readdir(dir)).filter((n) => n.endsWith('.seg'));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT')
        return {
          check: 'spool',
          status: 'ok',
          message: `spool ${dir} is empty (created at start)`,
          details: { dir, segments: 0, bytes: 0 },
        };
      return {
        check: 'spool',
        status: 'fail',
        message: `spool ${dir} cannot be read (${code ?? String(error)})`,
        details: { dir },
      };
    }
    const sizes = await Promise.all(
      names.map((n) =>
        fs.stat(path.join(dir, n)).then(
          (s) => s.size,
          () => 0,
        ),
      ),
    );
    const bytes = sizes.reduce((a, b) => a + b, 0);
    const details = { dir, segments: names.length, bytes };
    const probe = path.join(dir, `.doctor-write-test-${process.pid}`);
    try {
      await fs.writeFile(probe, 'ok');
      await fs.rm(probe);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      return {
        check: 'spool',
        status: 'fail',
        message: `spool ${dir} cannot be written (${code ?? String(error)}); packets cannot be acknowledged`,
        details,
      };
    }
    const summary = `spool ${dir}: ${names.length} segment file(s), ${(bytes / 1024 ** 2).toFixed(1)} MiB`;
    if (names.length > BACKLOG_SEGMENTS) {
      return {
        check: 'spool',
        status: 'warn',
        message: `${summary}: a backlog not yet in PostgreSQL; check the database and the ingest log lines`,
        details,
      };
    }
    return { check: 'spool', status: 'ok', message: summary, details };
  },
};
