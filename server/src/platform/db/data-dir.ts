import fs from 'node:fs/promises';
import path from 'node:path';
import { StartupError } from './startup-error.js';

/**
 * Creates the data directory if needed and proves it can be written, so a wrong
 * STELLWERK_DATA_DIR stops the start with one clear sentence instead of a stack trace later.
 */
export async function ensureWritableDataDir(dir: string): Promise<void> {
  try {
    await fs.mkdir(dir, { recursive: true });
    const probe = path.join(dir, `.write-test-${process.pid}`);
    await fs.writeFile(probe, 'ok');
    await fs.rm(probe);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    const reason =
      code === 'ENOTDIR' || code === 'EEXIST'
        ? 'a part of that path is a file, not a folder'
        : code === 'EACCES' || code === 'EPERM'
          ? 'this user may not write there'
          : code === 'EROFS'
            ? 'the file system is read-only'
            : code === 'ENOSPC'
              ? 'the disk is full'
              : code;
    throw new StartupError(
      `STELLWERK_DATA_DIR "${dir}" cannot be written (${reason}). Choose a folder this user may write to, e.g. STELLWERK_DATA_DIR=$HOME/stellwerk-data.`,
    );
  }
}
