import { mkdir, readdir, rename, stat, unlink } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';

/**
 * Export files in `<data dir>/exports`, named by their job: `<job id>.csv` or `.csv.gz`. A file is
 * written as `.partial` and renamed when complete, so a failed or interrupted export never leaves a
 * file that looks finished.
 */
export const exportFileName = (jobId: string, gzip: boolean) => `${jobId}.csv${gzip ? '.gz' : ''}`;

const JOB_FILE = /^([0-9a-f-]{36})\.csv(\.gz)?(\.partial)?$/;

/** Writes `pieces` to the job's file (gzip when asked); returns its path and size in bytes. */
export async function writeExportFile(
  dir: string,
  jobId: string,
  gzip: boolean,
  pieces: AsyncIterable<string>,
): Promise<{ file: string; bytes: number }> {
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, exportFileName(jobId, gzip));
  const partial = `${file}.partial`;
  try {
    const source = Readable.from(pieces, { objectMode: false });
    if (gzip) await pipeline(source, createGzip(), createWriteStream(partial));
    else await pipeline(source, createWriteStream(partial));
    await rename(partial, file);
  } catch (error) {
    await unlink(partial).catch(() => undefined);
    throw error;
  }
  return { file, bytes: (await stat(file)).size };
}

/**
 * Deletes export files whose job is gone (jobs are deleted after three months) and `.partial`
 * files older than a day (left by a node that died mid-export). `exists` answers which job ids
 * still exist.
 */
export async function pruneExportFiles(
  dir: string,
  exists: (jobIds: string[]) => Promise<Set<string>>,
  now = Date.now(),
): Promise<string[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const matched = names.map((name) => ({ name, m: JOB_FILE.exec(name) })).filter((x) => x.m);
  const alive = await exists([...new Set(matched.map((x) => x.m![1]!))]);
  const deleted: string[] = [];
  for (const { name, m } of matched) {
    const file = path.join(dir, name);
    let gone = !alive.has(m![1]!);
    if (!gone && m![3]) gone = now - (await stat(file).catch(() => ({ mtimeMs: now }))).mtimeMs > 86_400_000;
    if (gone) {
      await unlink(file).catch(() => undefined);
      deleted.push(name);
    }
  }
  return deleted;
}
