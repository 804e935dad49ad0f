import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from './support/database.js';
import { REPO_ROOT, serverEnv, sleep, tempDataDir } from './support/server-process.js';

/**
 * `stellwerk start` on a terminal (a pseudo-terminal from util-linux `script`) writes readable
 * lines, not JSON: the effective configuration with secrets masked, the ready line, and no line per
 * request at the default level.
 */

let db: { url: string; drop: () => Promise<void> };
let dataDir: string;
let script: ChildProcess | undefined;

beforeAll(async () => {
  db = await createTestDatabase();
  dataDir = await tempDataDir('stellwerk-tty-');
});
/** Pids whose parent is `pid` (Linux /proc). */
async function childrenOf(pid: number): Promise<number[]> {
  const children: number[] = [];
  for (const entry of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await fs.readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    // Fields after the command name (in parentheses, which may hold spaces): state, ppid, …
    if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) children.push(Number(entry));
  }
  return children;
}

afterAll(async () => {
  // A failed test leaves the server running under `script`.
  if (script?.pid) for (const pid of await childrenOf(script.pid)) process.kill(pid, 'SIGKILL');
  script?.kill('SIGKILL');
  await db?.drop();
  if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
});

describe('server log on a terminal', () => {
  it('is readable lines with the effective configuration, masked, and no line per request', async () => {
    const command = `exec ${process.execPath} --import tsx server/src/cli/stellwerk.ts start`;
    const child = (script = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], {
      cwd: REPO_ROOT,
      env: serverEnv({ DATABASE_URL: db.url, STELLWERK_DATA_DIR: dataDir, NO_COLOR: '1' }),
      stdio: ['pipe', 'pipe', 'pipe'],
    }));
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString().replaceAll('\r', '')));
    const exited = new Promise((resolve) => child.once('close', resolve));
    const deadline = Date.now() + 45_000;
    while (!/Stellwerk is ready/.test(output) && Date.now() < deadline) await sleep(100);
    const port = /Stellwerk is ready on http:\/\/[^:]+:(\d+)/.exec(output)?.[1];
    expect(port, output).toBeDefined();
    expect((await fetch(`http://127.0.0.1:${port}/xapi/v1/health`)).status).toBe(200);
    await sleep(300);
    // `script` runs the command as its child; SIGTERM goes to the server itself, as systemd sends it.
    for (const pid of await childrenOf(child.pid!)) process.kill(pid, 'SIGTERM');
    await exited;

    const lines = output.split('\n').filter((l) => l.trim() !== '');
    expect(lines.filter((l) => l.startsWith('{'))).toEqual([]);
    expect(lines).toContainEqual(
      expect.stringMatching(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}Stellwerk is ready on http/),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}effective configuration \(secrets masked\)/),
    );
    const password = new URL(db.url).password;
    expect(output).toMatch(/DATABASE_URL: postgres:\/\/[^:]+:\*{8}@.* \(env\)/);
    expect(output).toMatch(/STELLWERK_HTTP_PORT: 0 \(env\)/);
    if (password) expect(output).not.toContain(password);
    expect(output).not.toMatch(/\/xapi\/v1\/health/);
  });
});
