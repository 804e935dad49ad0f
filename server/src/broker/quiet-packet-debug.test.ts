import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const MODULE = fileURLToPath(new URL('./quiet-packet-debug.ts', import.meta.url));

interface Report {
  parsed: string;
  packetLogger: string | null;
  otherLogger: string | null;
  enable: string;
}

/**
 * A fresh Node process (its own module cache, as the server has) loads the module, then
 * `mqtt-packet` as Aedes does, parses a PINGREQ and reports which loggers `mqtt-packet` got.
 */
function run(debug: string | undefined) {
  const script = `await import(${JSON.stringify(MODULE)});
const { createRequire } = await import('node:module');
const fromPacket = createRequire(createRequire(process.cwd() + '/').resolve('mqtt-packet'));
const createDebug = fromPacket('debug');
const parser = fromPacket('mqtt-packet').parser({ protocolVersion: 4 });
let parsed = '';
parser.on('packet', (packet) => (parsed = packet.cmd));
parser.parse(Buffer.from([0xc0, 0x00]));
console.log(JSON.stringify({
  parsed,
  packetLogger: createDebug('mqtt-packet:parser').namespace ?? null,
  otherLogger: createDebug('coap').namespace ?? null,
  enable: typeof createDebug.enable,
}));`;
  const env = { ...process.env };
  delete env['DEBUG'];
  if (debug) env['DEBUG'] = debug;
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: fileURLToPath(new URL('../../..', import.meta.url)),
    encoding: 'utf8',
    env,
    timeout: 30_000,
  });
  if (result.error) throw result.error;
  expect(result.status, result.stderr).toBe(0);
  const report = JSON.parse(result.stdout.trim().split('\n').pop()!) as Report;
  return { report, stderr: result.stderr };
}

describe("mqtt-packet's disabled debug loggers", () => {
  it('are replaced by a logger that does nothing, and parsing still works', () => {
    const { report, stderr } = run(undefined);
    expect(report).toEqual({
      parsed: 'pingreq',
      packetLogger: null,
      otherLogger: 'coap',
      enable: 'function',
    });
    expect(stderr).not.toContain('mqtt-packet:parser');
  });

  it('still log when DEBUG names them', () => {
    const { report, stderr } = run('mqtt-packet:*');
    expect(report.packetLogger).toBe('mqtt-packet:parser');
    expect(report.parsed).toBe('pingreq');
    expect(stderr).toContain('mqtt-packet:parser');
  });
});
