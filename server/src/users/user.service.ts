import type { EntityManager } from '@mikro-orm/postgresql';
import { hashSecret } from '../platform/crypto/password.js';
import { errors } from '../platform/errors.js';
import { Account } from '../accounts/account.entity.js';
import { Role } from '../roles/role.entity.js';
import { User } from './user.entity.js';

export interface NewUser {
  accountId: string;
  email: string;
  name?: string;
  /** Omitted for federated users, who have no password. */
  password?: string;
  roleIds?: string[];
  locale?: string;
}

export const normaliseEmail = (email: string): string => email.trim().toLowerCase();

export const MIN_PASSWORD_LENGTH = 12;

export function assertPasswordPolicy(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH || password.length > 1024) {
    throw errors.validation(`Passwords need ${MIN_PASSWORD_LENGTH} to 1024 characters`, [{ path: '/password' }]);
  }
}

/** Users and their roles. Callers have authorised the target account. */
export class UserService {
  constructor(private readonly em: () => EntityManager) {}

  async create(input: NewUser): Promise<User> {
    const email = normaliseEmail(input.email);
    if (await this.em().count(User, { email })) {
      throw errors.conflict('EMAIL_TAKEN', `A user with e-mail ${email} already exists`, [{ path: '/email' }]);
    }
    const user = new User();
    user.account = this.em().getReference(Account, input.accountId);
    user.email = email;
    user.name = input.name?.trim() ?? '';
    user.locale = input.locale ?? 'en';
    if (input.password !== undefined) {
      assertPasswordPolicy(input.password);
      user.passwordHash = await hashSecret(input.password);
    }
    for (const roleId of input.roleIds ?? []) user.roles.add(this.em().getReference(Role, roleId));
    await this.em().persistAndFlush(user);
    return user;
  }

  findByEmail(email: string): Promise<User | null> {
    return this.em().findOne(User, { email: normaliseEmail(email) }, { populate: ['account'] });
  }

  count(): Promise<number> {
    return this.em().count(User, {});
  }
}
