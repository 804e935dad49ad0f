import { constants, type Stats } from 'node:fs';
import fs, { type FileHandle } from 'node:fs/promises';
import path from 'node:path';

/** A regular file opened inside a served folder; the caller sends it from `handle` and closes it. */
export interface ContainedFile {
  handle: FileHandle;
  stat: Stats;
  /** The file's real path (no symlinks), inside the folder's real path. */
  realPath: string;
}

// O_NOFOLLOW: the last component cannot have become a symlink since realpath looked at it.
// O_NONBLOCK: opening a FIFO would otherwise wait for a writer and hold a libuv thread.
// Neither exists on Windows, where they are 0 and the inode check below still applies.
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/** Path segments never served: parent references, dot files and names no file system allows. */
const refusedSegment = (segment: string) =>
  segment === '' || segment.startsWith('.') || segment.includes('\0');

const within = (root: string, file: string) =>
  file.startsWith(root.endsWith(path.sep) ? root : root + path.sep);

/**
 * Opens `relative` (the router's decoded path) below `root` for serving, or answers null (a 404 for
 * the caller) when it is not a regular file that really lives in the folder:
 * - `..`, dot files, empty segments, NUL and backslashes are refused before the file system is asked;
 * - symlinks are resolved (fs.realpath, of the folder too, so a folder that is itself a link works)
 *   and the file must stay below the folder: a link to `../secret.key` or `/etc/passwd` is refused,
 *   a link to another file of the folder is served;
 * - the opened descriptor must be a regular file (no directory, device, FIFO or socket);
 * - after opening, the real path is resolved again and must name the very inode that was opened, so
 *   a directory swapped for a symlink between the check and the open is refused.
 */
export async function openContainedFile(root: string, relative: string): Promise<ContainedFile | null> {
  if (relative.includes('\\') || relative.split('/').some(refusedSegment)) return null;
  let realRoot: string;
  let realPath: string;
  try {
    realRoot = await fs.realpath(root);
    realPath = await fs.realpath(path.join(realRoot, relative));
  } catch {
    return null;
  }
  if (!within(realRoot, realPath)) return null;
  let handle: FileHandle;
  try {
    handle = await fs.open(realPath, OPEN_FLAGS);
  } catch {
    return null;
  }
  try {
    const stat = await handle.stat();
    if (stat.isFile() && (await stillAt(realRoot, realPath, stat))) return { handle, stat, realPath };
  } catch {
    // Fall through: anything odd about the file is a 404 too.
  }
  await handle.close();
  return null;
}

async function stillAt(realRoot: string, realPath: string, opened: Stats): Promise<boolean> {
  const again = await fs.realpath(realPath);
  if (again !== realPath || !within(realRoot, again)) return false;
  const now = await fs.stat(again);
  return now.ino === opened.ino && now.dev === opened.dev;
}
