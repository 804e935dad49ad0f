import { describe, expect, it } from 'vitest';
import { CliError, type CliCommand, type CliIo } from './command.js';
import { runCli } from './dispatch.js';
import { COMMANDS } from './registry.js';

/** The dispatcher with small commands of its own: what it prints and which exit code it returns. */
function io(): CliIo & { outText: string[]; errText: string[] } {
  const outText: string[] = [];
  const errText: string[] = [];
  return { outText, errText, out: (l) => outText.push(l), err: (l) => errText.push(l), env: {} };
}

const ran: string[][] = [];
const commands: CliCommand[] = [
  {
    name: 'admin create',
    summary: 'create',
    usage: 'Usage: stellwerk admin create',
    run: async (args) => (ran.push(args), 0),
  },
  { name: 'admin', summary: 'group word alone', usage: 'Usage: stellwerk admin', run: async () => 7 },
  {
    name: 'fail',
    summary: 'fails',
    usage: 'Usage: stellwerk fail',
    run: () => Promise.reject(new CliError('the reason', 3)),
  },
  {
    name: 'crash',
    summary: 'crashes',
    usage: 'Usage: stellwerk crash',
    run: () => Promise.reject(new Error('boom\n    at x')),
  },
];

describe('stellwerk dispatcher', () => {
  it('runs the longest matching command with the remaining arguments', async () => {
    expect(await runCli(['admin', 'create', '--email', 'a@b.c'], io(), commands)).toBe(0);
    expect(ran.at(-1)).toEqual(['--email', 'a@b.c']);
    expect(await runCli(['admin', 'other'], io(), commands)).toBe(7);
  });

  it("prints a command's usage for --help anywhere after its name, without running it", async () => {
    const out = io();
    const before = ran.length;
    expect(await runCli(['admin', 'create', '--email', 'x', '--help'], out, commands)).toBe(0);
    expect(out.outText).toEqual(['Usage: stellwerk admin create']);
    expect(ran.length).toBe(before);
  });

  it('turns a CliError into one line and its exit code, anything else into one line and 1', async () => {
    const failed = io();
    expect(await runCli(['fail'], failed, commands)).toBe(3);
    expect(failed.errText).toEqual(['stellwerk fail: the reason']);
    const crashed = io();
    expect(await runCli(['crash'], crashed, commands)).toBe(1);
    expect(crashed.errText).toEqual(['stellwerk crash: boom']);
  });

  it('exits 2 on an unknown command and 0 with the command list for --help', async () => {
    const unknown = io();
    expect(await runCli(['nope'], unknown, commands)).toBe(2);
    expect(unknown.errText[0]).toContain('unknown command "nope"');
    const help = io();
    expect(await runCli(['--help'], help, commands)).toBe(0);
    expect(help.outText[0]).toMatch(/admin create\s+create/);
  });

  it('has usage text for every registered command, naming the command', () => {
    for (const command of COMMANDS) expect(command.usage).toContain(`stellwerk ${command.name}`);
    expect(new Set(COMMANDS.map((c) => c.name)).size).toBe(COMMANDS.length);
  });
});
