import { describe, expect, it } from 'vitest';
import { CliError } from '../cli/command.js';
import { backupCommand, parseBackupArgs, restoreCommand } from './backup.commands.js';

const io = { out: () => undefined, err: () => undefined, env: {} };

describe('backup and restore arguments', () => {
  it('backup takes --out FILE or --out=FILE and nothing else', () => {
    expect(parseBackupArgs([])).toEqual({ out: undefined });
    expect(parseBackupArgs(['--out', 'a.tar.gz'])).toEqual({ out: 'a.tar.gz' });
    expect(parseBackupArgs(['--out=b.tar.gz'])).toEqual({ out: 'b.tar.gz' });
    expect(() => parseBackupArgs(['--out'])).toThrow(new CliError('--out needs a FILE', 2));
    expect(() => parseBackupArgs(['extra'])).toThrow(/Unknown argument extra/);
  });

  it('restore needs exactly one FILE, with exit code 2 otherwise', async () => {
    await expect(restoreCommand.run([], io)).rejects.toMatchObject({ exitCode: 2 });
    await expect(restoreCommand.run(['a', 'b'], io)).rejects.toThrow(/exactly one archive FILE/);
    await expect(restoreCommand.run(['--force', 'a'], io)).rejects.toThrow(/Unknown option --force/);
  });

  it('names its subcommands and documents every option in --help', () => {
    expect([backupCommand.name, restoreCommand.name]).toEqual(['backup', 'restore']);
    expect(backupCommand.usage).toMatch(/--out FILE/);
    expect(restoreCommand.usage).toMatch(/^Usage: stellwerk restore FILE/);
  });
});
