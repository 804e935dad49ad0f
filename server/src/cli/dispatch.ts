import { CliError, type CliCommand, type CliIo } from './command.js';
import { errorText } from './cli-runtime.js';

const HELP = new Set(['--help', '-h']);

/** `stellwerk --help`: every command with its one-line summary, in registry order. */
export function topLevelUsage(commands: readonly CliCommand[]): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    'Usage: stellwerk <command> [options]',
    '',
    'Operates a Stellwerk server. Reads the same configuration as the server: the environment, then',
    '<data dir>/stellwerk.conf (STELLWERK_DATA_DIR from the environment only).',
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Run "stellwerk <command> --help" for a command\'s options.',
  ].join('\n');
}

/** The command whose name's words start `args`, the longest match (`admin create` before `admin`). */
export function findCommand(
  commands: readonly CliCommand[],
  args: readonly string[],
): { command: CliCommand; rest: string[] } | undefined {
  const sorted = [...commands].sort((a, b) => b.name.split(' ').length - a.name.split(' ').length);
  for (const command of sorted) {
    const words = command.name.split(' ');
    if (words.every((word, i) => args[i] === word)) return { command, rest: args.slice(words.length) };
  }
  return undefined;
}

/**
 * Runs one `stellwerk` invocation and resolves to its exit code: 0 on success, the `CliError`'s code
 * with its one-line reason on stderr, 1 with the error's message for anything unexpected, 2 for a
 * usage mistake. `--help` or `-h` anywhere after a command prints that command's usage.
 */
export async function runCli(
  argv: readonly string[],
  io: CliIo,
  commands: readonly CliCommand[],
): Promise<number> {
  const [first] = argv;
  if (first === undefined) {
    io.err(topLevelUsage(commands));
    return 2;
  }
  if (HELP.has(first) || first === 'help') {
    io.out(topLevelUsage(commands));
    return 0;
  }
  const found = findCommand(commands, argv);
  if (!found) {
    const group = commands.filter((c) => c.name.startsWith(`${first} `));
    if (group.length) {
      const text = [
        `Usage: stellwerk ${first} <${group.map((c) => c.name.slice(first.length + 1)).join('|')}>`,
        '',
      ]
        .concat(group.map((c) => `  ${c.name}  ${c.summary}`))
        .join('\n');
      if (argv.length === 1) {
        io.err(text);
        return 2;
      }
      if (argv.slice(1).some((a) => HELP.has(a))) {
        io.out(text);
        return 0;
      }
      io.err(`stellwerk: unknown command "${argv.slice(0, 2).join(' ')}"\n${text}`);
      return 2;
    }
    io.err(`stellwerk: unknown command "${first}"; run "stellwerk --help" for the list`);
    return 2;
  }
  const { command, rest } = found;
  if (rest.some((a) => HELP.has(a))) {
    io.out(command.usage);
    return 0;
  }
  try {
    return await command.run(rest, io);
  } catch (error) {
    if (error instanceof CliError) {
      io.err(`stellwerk ${command.name}: ${error.message}`);
      return error.exitCode;
    }
    io.err(`stellwerk ${command.name}: ${oneLine(errorText(error))}`);
    return 1;
  }
}

function oneLine(text: string): string {
  return text.split('\n')[0]!.trim();
}
