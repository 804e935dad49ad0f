import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  killSpawnedServers,
  processesMentioning,
  runFailingServer,
  tempDataDir,
} from './support/server-process.js';

/**
 * A server that cannot start must say why in one line naming the variable to fix, exit non-zero
 * quickly, print no stack trace, and leave no embedded PostgreSQL behind.
 */
let dir: string;
const occupied: net.Server[] = [];

beforeAll(async () => {
  dir = await tempDataDir('stellwerk-startup-');
});
afterAll(async () => {
  killSpawnedServers();
  await Promise.all(occupied.map((server) => new Promise((resolve) => server.close(resolve))));
  await fs.rm(dir, { recursive: true, force: true });
});

/** Holds a port on 127.0.0.1 the way another program would. */
async function occupyPort(): Promise<number> {
  const server = net.createServer();
  occupied.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as net.AddressInfo).port;
}

function expectCleanFailure(
  result: Awaited<ReturnType<typeof runFailingServer>>,
  variable: string,
  maxMs: number,
) {
  expect(result.code, result.output).toBe(1);
  expect(result.output).toContain(`Stellwerk cannot start: `);
  expect(result.output).toMatch(new RegExp(`cannot start: [^\\n]*${variable}`));
  expect(result.output).not.toMatch(/\n\s+at /); // a sentence, not a stack trace
  expect(result.durationMs).toBeLessThan(maxMs);
}

describe('start-up errors', () => {
  it('a bad environment value names the variable', async () => {
    const result = await runFailingServer({
      STELLWERK_HTTP_PORT: 'abc',
      STELLWERK_DATA_DIR: path.join(dir, 'unused'),
    });
    expectCleanFailure(result, 'STELLWERK_HTTP_PORT', 15_000);
    expect(result.output).toContain('must be an integer, got "abc"');
  });

  it('a data directory below a regular file names STELLWERK_DATA_DIR', async () => {
    // Tests run as root, so permissions alone would not stop the write: a file in the path does.
    const file = path.join(dir, 'not-a-folder');
    await fs.writeFile(file, 'x');
    const result = await runFailingServer({
      STELLWERK_DATA_DIR: path.join(file, 'data'),
      STELLWERK_PG_PORT: '0',
    });
    expectCleanFailure(result, 'STELLWERK_DATA_DIR', 15_000);
    expect(result.output).toContain('cannot be written');
  });

  it('the data directory is checked with DATABASE_URL too, before the database is contacted', async () => {
    const file = path.join(dir, 'also-a-file');
    await fs.writeFile(file, 'x');
    const result = await runFailingServer({
      STELLWERK_DATA_DIR: path.join(file, 'data'),
      DATABASE_URL: 'postgres://nobody:secret@127.0.0.1:1/none',
    });
    expectCleanFailure(result, 'STELLWERK_DATA_DIR', 15_000);
  });

  it('an unreachable DATABASE_URL is named without its password', async () => {
    const result = await runFailingServer({
      STELLWERK_DATA_DIR: path.join(dir, 'external'),
      DATABASE_URL: 'postgres://stellwerk:hunter2-secret@127.0.0.1:1/stellwerk',
    });
    expectCleanFailure(result, 'DATABASE_URL', 15_000);
    expect(result.output).toContain('127.0.0.1:1/stellwerk');
    expect(result.output).not.toContain('hunter2-secret');
  });

  it('an embedded PostgreSQL port in use names STELLWERK_PG_PORT', async () => {
    const port = await occupyPort();
    const dataDir = path.join(dir, 'pg-port');
    const result = await runFailingServer({ STELLWERK_DATA_DIR: dataDir, STELLWERK_PG_PORT: String(port) });
    expectCleanFailure(result, 'STELLWERK_PG_PORT', 15_000);
    expect(result.output).toContain(`STELLWERK_PG_PORT ${port} is already in use`);
  });

  it('an HTTP port in use names STELLWERK_HTTP_PORT and stops the embedded PostgreSQL it started', async () => {
    const port = await occupyPort();
    const dataDir = path.join(dir, 'http-port');
    const result = await runFailingServer({
      STELLWERK_DATA_DIR: dataDir,
      STELLWERK_PG_PORT: '0',
      STELLWERK_HTTP_PORT: String(port),
    });
    expectCleanFailure(result, 'STELLWERK_HTTP_PORT', 45_000);
    expect(result.output).toContain('"part":"database","msg":"stopped"');
    expect(await processesMentioning(dataDir)).toEqual([]);
  });

  it('a packet spool directory held by another running process names STELLWERK_SPOOL_DIR', async () => {
    const dataDir = path.join(dir, 'spool-lock');
    const spoolDir = path.join(dir, 'spool-held');
    await fs.mkdir(spoolDir, { recursive: true });
    // This test process stands in for another server holding the spool (it is alive).
    await fs.writeFile(path.join(spoolDir, 'LOCK'), `${process.pid}\n`);
    const result = await runFailingServer({
      STELLWERK_DATA_DIR: dataDir,
      STELLWERK_PG_PORT: '0',
      STELLWERK_SPOOL_DIR: spoolDir,
    });
    expectCleanFailure(result, 'STELLWERK_SPOOL_DIR', 45_000);
    expect(result.output).toContain(`is in use by process ${process.pid}`);
    expect(await fs.readFile(path.join(spoolDir, 'LOCK'), 'utf8')).toBe(`${process.pid}\n`);
    expect(await processesMentioning(dataDir)).toEqual([]);
  });
});
