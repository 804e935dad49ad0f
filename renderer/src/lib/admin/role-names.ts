import { i18n } from '../i18n.svelte';

interface RoleLike {
  name: string;
  builtIn?: boolean;
  description?: string | null;
}

/**
 * A role's name and description as the console shows them: a built-in role's in the console's
 * language (the server keeps the English ones, which are the API's names), any other role's as its
 * author wrote them.
 */
export function roleName(role: RoleLike): string {
  return (role.builtIn && i18n.t.admin.roles.builtInNames[role.name]?.name) || role.name;
}

export function roleDescription(role: RoleLike): string {
  return (
    (role.builtIn && i18n.t.admin.roles.builtInNames[role.name]?.description) || (role.description ?? '')
  );
}
