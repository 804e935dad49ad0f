import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { buildConsole } from './console-harness.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The console built once from the sources for the e2e run (without precompressed copies). */
    builtConsoleDir: string;
  }
}

/**
 * Builds the console once per e2e run: each test file copies it instead of building its own (a build
 * is about 15 s of CPU; the sources do not change during a run).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'stellwerk-console-built-'));
  buildConsole(dir);
  project.provide('builtConsoleDir', dir);
  return async () => {
    await fs.rm(dir, { recursive: true, force: true });
  };
}
