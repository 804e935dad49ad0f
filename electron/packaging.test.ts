import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * `npm ci` must stay registry-only: the Electron binary is fetched only by `npm run desktop` and
 * `npm run dist`, never by an install script, and no dependency comes from a Git host.
 */

const root = path.join(import.meta.dirname, '..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  devDependencies: Record<string, string>;
  allowScripts: Record<string, boolean>;
  scripts: Record<string, string>;
};
const lock = JSON.parse(fs.readFileSync(path.join(root, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { resolved?: string; hasInstallScript?: boolean }>;
};

describe('desktop packaging dependencies', () => {
  it('pins electron and electron-builder exactly, with Electron’s download script denied', () => {
    expect(pkg.devDependencies.electron).toMatch(/^\d+\.\d+\.\d+$/);
    expect(pkg.devDependencies['electron-builder']).toMatch(/^\d+\.\d+\.\d+$/);
    expect(pkg.allowScripts.electron).toBe(false);
  });

  it('runs the installed electron and electron-builder, not a version fetched by npx', () => {
    expect(pkg.scripts.desktop).toMatch(/(^|&& )electron dist\/electron\/main\.js$/);
    expect(pkg.scripts.dist).toMatch(/&& electron-builder --config electron-builder.yml/);
    expect(`${pkg.scripts.desktop} ${pkg.scripts.dist}`).not.toMatch(/npx/);
  });

  it('takes every locked package from the registry', () => {
    const elsewhere = Object.entries(lock.packages)
      .filter(([, entry]) => entry.resolved && !entry.resolved.startsWith('https://registry.npmjs.org/'))
      .map(([name, entry]) => `${name}: ${entry.resolved}`);
    expect(elsewhere).toEqual([]);
  });

  it('runs no install script of the Electron packages at npm ci', () => {
    const unreviewed = Object.entries(lock.packages)
      .filter(
        ([name, entry]) => entry.hasInstallScript && /(^|\/)(electron[\w-]*|@electron\/[\w-]+)$/.test(name),
      )
      .map(([name]) => name.replace(/^.*node_modules\//, ''))
      .filter((name) => pkg.allowScripts[name] !== false);
    expect(unreviewed).toEqual([]);
  });
});
