// @ts-check
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** The maintainer scripts, in installers/linux/debian/ (what each one does is written at its top). */
const MAINTAINER_SCRIPTS = ['postinst', 'prerm', 'postrm'];

/** Debian's name for Node's `process.arch`, when dpkg cannot tell. */
const DEBIAN_ARCH = /** @type {Record<string, string>} */ ({
  x64: 'amd64',
  arm64: 'arm64',
  arm: 'armhf',
  ia32: 'i386',
  ppc64: 'ppc64el',
  s390x: 's390x',
});

/** The host's Debian architecture: `dpkg --print-architecture`, else Node's name mapped. */
export function debianArch() {
  const dpkg = spawnSync('dpkg', ['--print-architecture'], { encoding: 'utf8' });
  if (dpkg.status === 0 && dpkg.stdout.trim()) return dpkg.stdout.trim();
  const arch = DEBIAN_ARCH[process.arch];
  if (!arch) throw new Error(`no Debian architecture known for ${process.arch}`);
  return arch;
}

/**
 * A Debian version from an npm version: a pre-release (`0.3.0-rc.1`) sorts before its release in
 * semver, and `~` does that in Debian (`0.3.0~rc.1`); build metadata (`+test1`) sorts after.
 * @param {string} version
 */
export function debianVersion(version) {
  if (!/^\d[\w.+~-]*$/.test(version)) throw new Error(`"${version}" is not a usable package version`);
  return version.replace('-', '~');
}

/**
 * Turns the staged tree into `out` with dpkg-deb (files owned by root, modes as staged).
 * @param {{ root: string, stage: string, out: string, version: string, arch: string, compression: string }} options
 */
export function buildDeb({ root, stage, out, version, arch, compression }) {
  const installedSize = installedSizeKiB(stage);
  const control = path.join(stage, 'DEBIAN');
  fs.mkdirSync(control);
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const fields = [
    'Package: stellwerk',
    `Version: ${debianVersion(version)}`,
    `Architecture: ${arch}`,
    'Maintainer: Stellwerk <stellwerk@localhost>',
    `Installed-Size: ${installedSize}`,
    // The bundled Node and PostgreSQL need glibc 2.28+ and the C++ runtime; useradd comes from passwd.
    'Depends: libc6 (>= 2.28), libgcc-s1, libstdc++6, passwd',
    'Section: net',
    'Priority: optional',
    `Description: ${pkg.description}, headless server`,
    ' Stellwerk as a systemd service: MQTT broker, HTTP API and web console, with its',
    ' own embedded PostgreSQL and Node 24 runtime in /opt/stellwerk. Data lives in',
    ' /var/lib/stellwerk and is kept when the package is removed; purge deletes it.',
  ];
  fs.writeFileSync(path.join(control, 'control'), `${fields.join('\n')}\n`);
  for (const script of MAINTAINER_SCRIPTS) {
    fs.copyFileSync(path.join(root, 'installers/linux/debian', script), path.join(control, script));
    fs.chmodSync(path.join(control, script), 0o755);
  }
  fs.chmodSync(control, 0o755);
  run('dpkg-deb', ['--root-owner-group', `-Z${compression}`, '--build', stage, out]);
}

/** Installed-Size: the tree's disk use in KiB, as dpkg-gencontrol counts it (each file rounded up). */
function installedSizeKiB(/** @type {string} */ dir) {
  let kib = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const file = path.join(entry.parentPath, entry.name);
    kib += entry.isFile() ? Math.ceil(fs.statSync(file).size / 1024) : 1;
  }
  return kib;
}

/**
 * @param {string} command
 * @param {string[]} args
 */
export function run(command, args) {
  const result = spawnSync(command, args, { stdio: ['ignore', 'inherit', 'inherit'] });
  if (result.error) throw new Error(`${command} could not run: ${result.error.message}`);
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${result.status}`);
}
