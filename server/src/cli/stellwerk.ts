#!/usr/bin/env node
import { runCli } from './dispatch.js';
import { COMMANDS } from './registry.js';

/**
 * The `stellwerk` command: `stellwerk <command> [options]` (registry.ts lists the commands). The
 * package's launcher runs this file with the bundled Node; from a checkout, `npm run stellwerk -- …`.
 */
const code = await runCli(
  process.argv.slice(2),
  {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
    env: process.env,
  },
  COMMANDS,
);
process.exitCode = code;
// Exit once output is flushed, even if a library left a handle open (a pool's idle timer).
setTimeout(() => process.exit(code), 200).unref();
