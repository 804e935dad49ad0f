import type { EntityManager } from '@mikro-orm/postgresql';
import { BUILT_IN_ROLES } from './permissions.js';
import { Role } from './role.entity.js';

/** Roles: built-in ones shared by all accounts, and each account's own. */
export class RoleService {
  constructor(private readonly em: () => EntityManager) {}

  /** Creates or refreshes the built-in roles, so their permissions follow the code. */
  async ensureBuiltIns(): Promise<void> {
    const existing = await this.em().find(Role, { account: null, builtIn: true });
    for (const def of BUILT_IN_ROLES) {
      const role = existing.find((r) => r.name === def.name) ?? new Role();
      role.name = def.name;
      role.description = def.description;
      role.permissions = def.permissions;
      role.builtIn = true;
      this.em().persist(role);
    }
    await this.em().flush();
  }

  builtIn(name: string): Promise<Role | null> {
    return this.em().findOne(Role, { account: null, builtIn: true, name });
  }
}
