import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildInputs, readStamp, staleReason } from './build-stamp.mjs';

describe('build stamp (npm start builds only when needed)', () => {
  let root: string;
  const write = (file: string, text = 'x') => {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), text);
  };

  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'stellwerk-stamp-'));
    for (const file of ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'README.md']) write(file);
    write('server/src/main.ts');
    write('server/src/config.test.ts');
    write('server/src/setup/bootstrap.service.ts');
    write('migrations/Migration1_initial.ts');
    write('test/integration/a.test.ts');
    write('renderer/src/App.svelte');
    write('renderer/dist/index.html');
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('collects server and console sources, migrations, package and tsconfig files, but no tests, docs or output', () => {
    expect(buildInputs(root).map((i) => i.path)).toEqual([
      'migrations/Migration1_initial.ts',
      'package.json',
      'renderer/src/App.svelte',
      'server/src/main.ts',
      'server/src/setup/bootstrap.service.ts',
      'tsconfig.build.json',
      'tsconfig.json',
    ]);
  });

  it('is current right after a build and stale when an input is newer, added or removed', () => {
    const inputs = buildInputs(root);
    const stamp = {
      startedAt: Math.max(...inputs.map((i) => i.mtimeMs)) + 1,
      files: inputs.map((i) => i.path),
    };
    expect(staleReason(stamp, inputs, true)).toBeUndefined();

    const touched = inputs.map((i) =>
      i.path === 'server/src/main.ts' ? { ...i, mtimeMs: stamp.startedAt + 5 } : i,
    );
    expect(staleReason(stamp, touched, true)).toBe('server/src/main.ts changed since the last build');
    expect(staleReason(stamp, inputs.slice(1), true)).toMatch(/added or removed/);
    expect(staleReason(stamp, [...inputs, { path: 'server/src/x.ts', mtimeMs: 0 }], true)).toMatch(
      /added or removed/,
    );
  });

  it('is stale without a build or without a stamp', () => {
    const inputs = buildInputs(root);
    expect(staleReason({ startedAt: Date.now() + 1000, files: [] }, inputs, false)).toBe(
      'dist/ has no build yet',
    );
    expect(staleReason(undefined, inputs, true)).toBe('dist/ has no build stamp');
  });

  it('reads a stamp it wrote and ignores a damaged one', () => {
    write('dist/.build-stamp.json', JSON.stringify({ startedAt: 5, files: ['a'] }));
    expect(readStamp(path.join(root, 'dist/.build-stamp.json'))).toEqual({ startedAt: 5, files: ['a'] });
    write('dist/.build-stamp.json', '{"startedAt":');
    expect(readStamp(path.join(root, 'dist/.build-stamp.json'))).toBeUndefined();
    expect(readStamp(path.join(root, 'missing.json'))).toBeUndefined();
  });
});
