/**
 * A subcommand of the `stellwerk` command (`stellwerk backup`, `stellwerk admin reset-password` …).
 * Each lives beside the domain it drives and is listed once in the command registry; the dispatcher
 * prints `usage` for `--help` and turns a `CliError` into its one-line reason and exit code.
 */
export interface CliCommand {
  /** The words after `stellwerk`: `backup`, `admin reset-password`. */
  name: string;
  /** One line for `stellwerk --help`. */
  summary: string;
  /** The whole `--help` text of this subcommand. */
  usage: string;
  /** Runs with the arguments after its name; resolves to the process's exit code. */
  run(args: string[], io: CliIo): Promise<number>;
}

/** Where a command writes and what it reads: the process's, or a test's. */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  env: NodeJS.ProcessEnv;
}

/** A failure with a one-line reason for the operator; the dispatcher prints it and exits with `exitCode`. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}
