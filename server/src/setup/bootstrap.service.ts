import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.js';
import type { AccountService } from '../accounts/account.service.js';
import { Account } from '../accounts/account.entity.js';
import { randomToken, safeEqual, sha256 } from '../platform/crypto/tokens.js';
import type { RoleService } from '../roles/role.service.js';
import type { UserService } from '../users/user.service.js';
import type { User } from '../users/user.entity.js';
import type { SecretBox } from '../platform/crypto/secret-box.js';
import { SystemSetting } from './system-setting.entity.js';
import { errors } from '../platform/errors.js';

const ONBOARDING_KEY = 'onboarding_token';

/**
 * The hash is what a login attempt is checked against; the sealed copy lets every node that shares
 * the secret key print the same token, so starting a second node does not void the first one's.
 */
interface StoredSetupToken {
  sha256: string;
  sealed: string;
}

const isStoredSetupToken = (value: unknown): value is StoredSetupToken =>
  typeof (value as StoredSetupToken | null)?.sha256 === 'string' &&
  typeof (value as StoredSetupToken).sealed === 'string';

export interface BootstrapResult {
  rootAccountId: string;
  /** Set when the instance has no admin yet and no STELLWERK_ADMIN_*: print it once. */
  setupToken?: string;
}

/** First start: root account, built-in roles, and the first admin or a one-time onboarding token. */
export class BootstrapService {
  constructor(
    private readonly em: () => EntityManager,
    private readonly accounts: AccountService,
    private readonly roles: RoleService,
    private readonly users: UserService,
    private readonly secretBox: SecretBox,
  ) {}

  async run(config: Config, log: FastifyBaseLogger): Promise<BootstrapResult> {
    await this.roles.ensureBuiltIns();
    let root = await this.em().findOne(Account, { parent: null }, { orderBy: { createdAt: 'asc' } });
    if (!root) {
      root = await this.accounts.createRoot('Stellwerk');
      log.info({ accountId: root.id }, 'created the root account');
    }
    if ((await this.users.count()) > 0) return { rootAccountId: root.id };

    if (config.adminEmail && config.adminPassword) {
      await this.createAdmin(root.id, config.adminEmail, config.adminPassword, 'Administrator');
      log.info({ email: config.adminEmail }, 'created the first admin from STELLWERK_ADMIN_EMAIL');
      return { rootAccountId: root.id };
    }
    return { rootAccountId: root.id, setupToken: await this.currentSetupToken() };
  }

  /** The pending setup token, created on first need; reused while this key can open it. */
  private async currentSetupToken(): Promise<string> {
    const stored = await this.em().findOne(SystemSetting, { key: ONBOARDING_KEY });
    if (stored && isStoredSetupToken(stored.value)) {
      try {
        return this.secretBox.open(stored.value.sealed);
      } catch {
        // Sealed with another key (a node started with a different STELLWERK_SECRET_KEY): replace it.
      }
    }
    const setupToken = randomToken(24);
    const value: StoredSetupToken = { sha256: sha256(setupToken), sealed: this.secretBox.seal(setupToken) };
    await this.em().upsert(SystemSetting, { key: ONBOARDING_KEY, value, updatedAt: new Date() });
    return setupToken;
  }

  async onboardingOpen(): Promise<boolean> {
    return (await this.users.count()) === 0;
  }

  /** Creates the first admin if the token matches and no user exists yet; the token is then spent. */
  async onboard(token: string, input: { email: string; password: string; name?: string }): Promise<User> {
    // One transaction holding the token row: of two racing requests with the right token, only one creates an admin.
    return this.em().transactional(async (em) => {
      const stored = await em.findOne(
        SystemSetting,
        { key: ONBOARDING_KEY },
        { lockMode: LockMode.PESSIMISTIC_WRITE },
      );
      if (!stored || !isStoredSetupToken(stored.value) || !safeEqual(stored.value.sha256, sha256(token))) {
        throw errors.forbidden('INVALID_SETUP_TOKEN', 'The setup token is not valid');
      }
      if (!(await this.onboardingOpen()))
        throw errors.conflict('ALREADY_ONBOARDED', 'The first admin exists already');
      const root = await em.findOneOrFail(Account, { parent: null }, { orderBy: { createdAt: 'asc' } });
      const user = await this.createAdmin(
        root.id,
        input.email,
        input.password,
        input.name ?? 'Administrator',
      );
      await em.nativeDelete(SystemSetting, { key: ONBOARDING_KEY });
      return user;
    });
  }

  private async createAdmin(accountId: string, email: string, password: string, name: string): Promise<User> {
    const role = await this.roles.builtIn('Administrator');
    return this.users.create({ accountId, email, password, name, roleIds: role ? [role.id] : [] });
  }
}
