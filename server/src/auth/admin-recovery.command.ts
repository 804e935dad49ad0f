import type { CliCommand } from '../cli/command.js';

/**
 * `stellwerk admin create|reset-password|disable-2fa`: recovery for a locked-out admin, run on the
 * server's machine against the configured database (whether the server runs or not). Whoever can
 * run it can read the data directory already, so it asks for no other credential. Each change is
 * an audit event by the `system` actor (table and log line) naming the operating-system user.
 */

const PASSWORD_OPTIONS = [
  '  --password-stdin  read the new password from the first line of stdin (at least 12',
  '                    characters); without it a random password is generated and printed once',
].join('\n');

export const adminCreateCommand: CliCommand = {
  name: 'admin create',
  summary: 'Create an administrator in the root account',
  usage: [
    'Usage: stellwerk admin create --email ADDRESS [--name NAME] [--password-stdin]',
    '',
    'Creates a user with the built-in Administrator role in the root account. The server must have',
    'started once (it creates the root account and the roles).',
    '',
    PASSWORD_OPTIONS,
  ].join('\n'),
  async run(args, io) {
    const { runAdminCreate } = await import('./admin-recovery.js');
    return runAdminCreate(args, io);
  },
};

export const adminResetPasswordCommand: CliCommand = {
  name: 'admin reset-password',
  summary: "Set a user's password, end their sessions and lift the login lock on their address",
  usage: [
    'Usage: stellwerk admin reset-password --email ADDRESS [--password-stdin]',
    '',
    "Sets the user's password, ends every session of the user, and clears the failed-login lock",
    'on the e-mail address. Two-factor authentication stays as it is (see admin disable-2fa).',
    '',
    PASSWORD_OPTIONS,
  ].join('\n'),
  async run(args, io) {
    const { runAdminResetPassword } = await import('./admin-recovery.js');
    return runAdminResetPassword(args, io);
  },
};

export const adminDisable2faCommand: CliCommand = {
  name: 'admin disable-2fa',
  summary: "Turn off a user's two-factor authentication (lost authenticator)",
  usage: [
    'Usage: stellwerk admin disable-2fa --email ADDRESS',
    '',
    "Turns off the user's two-factor authentication and deletes their recovery codes. If the",
    "user's account requires 2FA, they are asked to enrol again at the next login.",
  ].join('\n'),
  async run(args, io) {
    const { runAdminDisable2fa } = await import('./admin-recovery.js');
    return runAdminDisable2fa(args, io);
  },
};

export const ADMIN_COMMANDS = [adminCreateCommand, adminResetPasswordCommand, adminDisable2faCommand];
