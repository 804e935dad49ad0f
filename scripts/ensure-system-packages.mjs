// @ts-check
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Run by `npm test` before vitest: the Debian packages listed in .ci/apt-packages must be
 * installed. Missing ones are installed when we are root and apt-get exists; otherwise the
 * run stops here with the command to run, instead of failing later inside some test.
 */

const ROOT = path.resolve(import.meta.dirname, '..');
const LIST = path.join(ROOT, '.ci', 'apt-packages');

/**
 * One package per line; `#` starts a comment; blank lines are ignored.
 * @param {string} text
 * @returns {string[]}
 */
export function parsePackageList(text) {
  const names = [];
  for (const line of text.split(/\r?\n/)) {
    const name = line.replace(/#.*/, '').trim();
    if (name === '') continue;
    if (!/^[a-z0-9][a-z0-9+.-]*$/.test(name))
      throw new Error(`${LIST}: "${name}" is not a Debian package name`);
    names.push(name);
  }
  return [...new Set(names)];
}

/**
 * @param {string} command
 * @returns {boolean}
 */
function hasCommand(command) {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

/**
 * @param {string} name
 * @returns {boolean}
 */
function isInstalled(name) {
  const result = spawnSync('dpkg-query', ['-W', '-f=${Status}', name], { encoding: 'utf8' });
  return result.status === 0 && result.stdout.includes('install ok installed');
}

/**
 * @param {string[]} args
 */
function run(args) {
  console.log(`$ ${args.join(' ')}`);
  const result = spawnSync(args[0] ?? '', args.slice(1), {
    stdio: 'inherit',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  if (result.status !== 0) {
    console.error(
      `ensure-system-packages: "${args.join(' ')}" failed (exit ${result.status ?? result.signal})`,
    );
    process.exit(1);
  }
}

function main() {
  const wanted = fs.existsSync(LIST) ? parsePackageList(fs.readFileSync(LIST, 'utf8')) : [];
  if (wanted.length === 0) return;
  if (!hasCommand('dpkg-query')) {
    // Not Debian: we cannot check; the tests that need a package will say so themselves.
    console.warn(
      `ensure-system-packages: not a Debian system; make sure these are installed: ${wanted.join(' ')}`,
    );
    return;
  }
  const missing = wanted.filter((name) => !isInstalled(name));
  if (missing.length === 0) return;

  const install = ['apt-get', 'install', '-y', '--no-install-recommends', ...missing];
  if (process.getuid?.() !== 0 || !hasCommand('apt-get')) {
    console.error(
      [
        `The tests need these Debian packages, which are not installed: ${missing.join(' ')}`,
        'Install them, then run the tests again:',
        `  sudo apt-get update && sudo ${install.join(' ')}`,
      ].join('\n'),
    );
    process.exit(1);
  }
  console.log(`ensure-system-packages: installing ${missing.join(' ')}`);
  run(['apt-get', 'update']);
  run(install);
  const still = missing.filter((name) => !isInstalled(name));
  if (still.length > 0) {
    console.error(`ensure-system-packages: still not installed after apt-get: ${still.join(' ')}`);
    process.exit(1);
  }
}

// Imported by its unit test for parsePackageList; runs only as a script.
if (path.resolve(process.argv[1] ?? '') === import.meta.filename) main();
