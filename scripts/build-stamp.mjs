// @ts-check
import fs from 'node:fs';
import path from 'node:path';

/**
 * What `npm run build` compiles and when it last did. Shared by build.mjs (writes the stamp)
 * and build-if-needed.mjs (reads it). Plain JS so both run on a bare `node`, before any build.
 */

export const ROOT = path.resolve(import.meta.dirname, '..');
export const DIST = path.join(ROOT, 'dist');
export const STAMP = path.join(DIST, '.build-stamp.json');

/** Inputs of the build (server and console): a change to any of them makes `dist/` stale. */
const INPUT_DIRS = ['server/src', 'migrations', 'renderer'];
const INPUT_FILES = /^(package\.json|package-lock\.json|tsconfig(\.[\w-]+)?\.json)$/;

/**
 * @typedef {{ startedAt: number, files: string[] }} Stamp
 * @typedef {{ path: string, mtimeMs: number }} Input
 */

/** @returns {Input[]} every input file, relative to the repository, sorted */
export function buildInputs(root = ROOT) {
  /** @type {Input[]} */
  const inputs = [];
  for (const name of fs.readdirSync(root)) {
    if (INPUT_FILES.test(name)) inputs.push(input(root, name));
  }
  for (const dir of INPUT_DIRS) {
    const absolute = path.join(root, dir);
    if (!fs.existsSync(absolute)) continue;
    for (const entry of fs.readdirSync(absolute, { recursive: true, withFileTypes: true })) {
      // Unit tests are not compiled into dist/, so editing one needs no rebuild.
      if (!entry.isFile() || entry.name.endsWith('.test.ts')) continue;
      // A console built into renderer/dist by hand (vite's default) is output, not input.
      if (path.relative(root, entry.parentPath).split(path.sep).slice(0, 2).join('/') === 'renderer/dist')
        continue;
      inputs.push(input(root, path.relative(root, path.join(entry.parentPath, entry.name))));
    }
  }
  return inputs.sort((a, b) => a.path.localeCompare(b.path));
}

/**
 * @param {string} root
 * @param {string} relative
 * @returns {Input}
 */
function input(root, relative) {
  return {
    path: relative.split(path.sep).join('/'),
    mtimeMs: fs.statSync(path.join(root, relative)).mtimeMs,
  };
}

/** @returns {Stamp | undefined} */
export function readStamp(stampFile = STAMP) {
  try {
    /** @type {unknown} */
    const parsed = JSON.parse(fs.readFileSync(stampFile, 'utf8'));
    const stamp = /** @type {Partial<Stamp> | null} */ (parsed);
    if (typeof stamp?.startedAt === 'number' && Array.isArray(stamp.files)) {
      return { startedAt: stamp.startedAt, files: stamp.files };
    }
  } catch {
    // missing or unreadable: treated as "never built"
  }
  return undefined;
}

/**
 * Why the build is stale, or undefined when it is current. The file list is kept in the stamp
 * so that a deleted or renamed source also triggers a rebuild, not only a newer one.
 * @param {Stamp | undefined} stamp
 * @param {Input[]} inputs
 * @param {boolean} hasEntry whether dist/server/src/main.js exists
 * @returns {string | undefined}
 */
export function staleReason(stamp, inputs, hasEntry) {
  if (!hasEntry) return 'dist/ has no build yet';
  if (!stamp) return 'dist/ has no build stamp';
  const newer = inputs.find((i) => i.mtimeMs > stamp.startedAt);
  if (newer) return `${newer.path} changed since the last build`;
  const files = inputs.map((i) => i.path);
  if (files.length !== stamp.files.length || files.some((f, i) => f !== stamp.files[i])) {
    return 'source files were added or removed since the last build';
  }
  return undefined;
}
