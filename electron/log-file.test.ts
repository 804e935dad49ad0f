import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openLogFile } from './log-file.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});
const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stellwerk-log-'));
  dirs.push(dir);
  return dir;
};
const lines = (file: string) => fs.readFileSync(file, 'utf8').trim().split('\n');

describe('desktop log file', () => {
  it('writes timestamped lines into a folder it creates', () => {
    const dir = path.join(tempDir(), 'logs');
    const log = openLogFile(dir, 'stellwerk.log');
    log.write('[server] Stellwerk is ready');
    log.write('[desktop] window opened');
    log.close();
    expect(log.file).toBe(path.join(dir, 'stellwerk.log'));
    const written = lines(log.file);
    expect(written).toHaveLength(2);
    expect(written[0]).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z \[server\] Stellwerk is ready$/);
  });

  it('keeps the previous run as .1 and starts a new file', () => {
    const dir = tempDir();
    const first = openLogFile(dir, 'stellwerk.log');
    first.write('first run');
    first.close();
    const second = openLogFile(dir, 'stellwerk.log');
    second.write('second run');
    second.close();
    expect(lines(second.file)[0]).toMatch(/second run$/);
    expect(lines(`${second.file}.1`)[0]).toMatch(/first run$/);
  });

  it('rotates a file that grows past its size limit, so it stays bounded', () => {
    const dir = tempDir();
    const log = openLogFile(dir, 'stellwerk.log', 200);
    for (let i = 0; i < 20; i++) log.write(`line ${i} ${'x'.repeat(20)}`);
    log.close();
    expect(fs.statSync(log.file).size).toBeLessThanOrEqual(200);
    expect(lines(log.file).at(-1)).toMatch(/line 19 x+$/);
    expect(fs.statSync(`${log.file}.1`).size).toBeLessThanOrEqual(200);
    expect(fs.readdirSync(dir).sort()).toEqual(['stellwerk.log', 'stellwerk.log.1']);
  });
});
