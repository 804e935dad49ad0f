import os from 'node:os';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { Account } from '../accounts/account.entity.js';
import { SYSTEM_ACTOR, AuditService } from '../audit/audit.service.js';
import { withCliOrm } from '../cli/cli-database.js';
import { assertKnownOptions, cliConfig, cliLogger, flag, option } from '../cli/cli-runtime.js';
import { CliError, type CliIo } from '../cli/command.js';
import { hashSecret } from '../platform/crypto/password.js';
import { randomToken } from '../platform/crypto/tokens.js';
import { AppError } from '../platform/errors.js';
import { Role } from '../roles/role.entity.js';
import { RecoveryCode, User } from '../users/user.entity.js';
import { assertPasswordPolicy, normaliseEmail } from '../users/user.service.js';
import { emailThrottleKey } from './login-throttle.service.js';
import { Session } from './session.entity.js';

/** The work of `stellwerk admin …` (admin-recovery.command.ts), loaded only when one runs. */

async function readPasswordFromStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return (Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0] ?? '').trim();
}

/** The password to set and whether to print it (only a generated one is printed). */
async function newPassword(args: string[]): Promise<{ password: string; generated: boolean }> {
  if (!flag(args, 'password-stdin')) return { password: randomToken(18), generated: true };
  const password = await readPasswordFromStdin();
  try {
    assertPasswordPolicy(password);
  } catch (error) {
    throw new CliError(error instanceof AppError ? error.message : String(error));
  }
  return { password, generated: false };
}

function requiredEmail(args: string[]): string {
  const email = option(args, 'email');
  if (!email) throw new CliError('--email is required', 2);
  return normaliseEmail(email);
}

/** Runs `work` with a fresh EntityManager; refuses a schema behind this version (`stellwerk migrate`). */
async function withUsers(
  io: CliIo,
  work: (em: EntityManager, audit: AuditService, log: Logger) => Promise<number>,
): Promise<number> {
  const config = cliConfig(io);
  const log = cliLogger(config);
  return withCliOrm(config, log, async (orm) => {
    const pending = await orm.getMigrator().getPendingMigrations();
    if (pending.length) {
      throw new CliError(
        `the database has ${pending.length} pending migration(s); run "stellwerk migrate" (or start the server) first`,
      );
    }
    const em = orm.em.fork();
    const audit = new AuditService(
      () => em,
      () => new Date(),
      log,
    );
    return work(em, audit, log);
  });
}

async function findUser(em: EntityManager, email: string): Promise<User> {
  const user = await em.findOne(User, { email }, { populate: ['account'] });
  if (!user) throw new CliError(`no user with the e-mail address ${email}`);
  return user;
}

const via = (command: string) => ({ via: `stellwerk ${command}`, osUser: os.userInfo().username });

export async function runAdminCreate(args: string[], io: CliIo): Promise<number> {
  assertKnownOptions(args, { values: ['email', 'name'], flags: ['password-stdin'] });
  const email = requiredEmail(args);
  const { password, generated } = await newPassword(args);
  return withUsers(io, async (em, audit) => {
    const root = await em.findOne(Account, { parent: null }, { orderBy: { createdAt: 'asc' } });
    const role = await em.findOne(Role, { account: null, builtIn: true, name: 'Administrator' });
    if (!root || !role)
      throw new CliError('the database has no root account yet: start the server once first');
    if (await em.count(User, { email }))
      throw new CliError(`a user with the e-mail address ${email} exists already`);
    const user = new User();
    user.account = root;
    user.email = email;
    user.name = option(args, 'name')?.trim() ?? 'Administrator';
    user.passwordHash = await hashSecret(password);
    user.roles.add(role);
    em.persist(user);
    await audit.record(
      {
        accountId: root.id,
        actor: SYSTEM_ACTOR,
        action: 'user.create',
        target: { type: 'user', id: user.id },
        details: { email, role: 'Administrator', ...via('admin create') },
      },
      em,
    );
    io.out(`created administrator ${email}`);
    if (generated) io.out(`password: ${password}`);
    return 0;
  });
}

export async function runAdminResetPassword(args: string[], io: CliIo): Promise<number> {
  assertKnownOptions(args, { values: ['email'], flags: ['password-stdin'] });
  const email = requiredEmail(args);
  const { password, generated } = await newPassword(args);
  return withUsers(io, async (em, audit) => {
    const user = await findUser(em, email);
    const passwordHash = await hashSecret(password);
    await em.transactional(async (tx) => {
      await tx.nativeUpdate(User, { id: user.id }, { passwordHash, updatedAt: new Date() });
      await tx.nativeDelete(Session, { user: user.id });
      await tx.getConnection().execute('DELETE FROM login_throttle WHERE key = ?', [emailThrottleKey(email)]);
      await audit.record(
        {
          accountId: user.account.id,
          actor: SYSTEM_ACTOR,
          action: 'user.password.reset',
          target: { type: 'user', id: user.id },
          details: { email, ...via('admin reset-password') },
        },
        tx,
      );
    });
    io.out(`password of ${email} reset; their sessions ended`);
    if (!user.active)
      io.out(`note: ${email} is deactivated; an administrator must activate the user in the console`);
    if (generated) io.out(`password: ${password}`);
    return 0;
  });
}

export async function runAdminDisable2fa(args: string[], io: CliIo): Promise<number> {
  assertKnownOptions(args, { values: ['email'] });
  const email = requiredEmail(args);
  return withUsers(io, async (em, audit) => {
    const user = await findUser(em, email);
    if (!user.totpEnabled && !user.totpSecretSealed) {
      io.out(`${email} has no two-factor authentication; nothing changed`);
      return 0;
    }
    await em.transactional(async (tx) => {
      await tx.nativeDelete(RecoveryCode, { user: user.id });
      await tx.nativeUpdate(
        User,
        { id: user.id },
        { totpEnabled: false, totpSecretSealed: null, totpLastStep: null },
      );
      await audit.record(
        {
          accountId: user.account.id,
          actor: SYSTEM_ACTOR,
          action: 'user.twoFactor.disable',
          target: { type: 'user', id: user.id },
          details: { email, ...via('admin disable-2fa') },
        },
        tx,
      );
    });
    io.out(`two-factor authentication of ${email} turned off`);
    return 0;
  });
}
