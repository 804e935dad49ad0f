import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker, type ResourceLimits } from 'node:worker_threads';

/**
 * Starts the worker thread whose file sits beside `callerUrl` (`import.meta.url` of the module that
 * starts it) as `<name>.ts` or `<name>.js`. Built output (dist/*.js) runs the compiled file directly;
 * from the sources (tsx, vitest) the thread registers tsx first, because a worker does not inherit
 * the parent's `--import tsx`.
 */
export function startWorkerThread(
  callerUrl: string,
  name: string,
  workerData: unknown,
  resourceLimits?: ResourceLimits,
): Worker {
  const here = fileURLToPath(callerUrl);
  const extension = path.extname(here);
  const entry = pathToFileURL(path.join(path.dirname(here), `${name}${extension}`));
  const options = { workerData, ...(resourceLimits ? { resourceLimits } : {}) };
  if (extension === '.js') return new Worker(entry, options);
  const tsx = pathToFileURL(
    path.join(
      path.dirname(createRequire(import.meta.url).resolve('tsx/package.json')),
      'dist/esm/api/index.mjs',
    ),
  ).href;
  const boot = `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(entry.href)}); })`;
  return new Worker(boot, { ...options, eval: true });
}

/**
 * Lowers the calling thread's CPU priority (Linux: a thread has its own nice value and
 * `/proc/thread-self` names its id). Returns false where that is not possible; the thread then runs
 * at the normal priority.
 */
export function lowerThreadPriority(nice: number): boolean {
  if (nice <= 0) return true;
  try {
    const threadId = Number(fs.readlinkSync('/proc/thread-self').split('/').pop());
    os.setPriority(threadId, nice);
    return true;
  } catch {
    return false;
  }
}
