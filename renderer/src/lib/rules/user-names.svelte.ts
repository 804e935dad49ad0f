import { SvelteMap } from 'svelte/reactivity';
import { api } from '../../api/client';
import { session } from '../session.svelte';

/**
 * Names of the users who acknowledged or closed alarm entries (the alarm log keeps only their ids).
 * The signed-in user is known already; anyone else is read once through GET /xapi/v1/users/{id},
 * and only by a user who may read users: for others, and for ids that are no user (an API key),
 * the console shows no name.
 */
class UserNames {
  private readonly names = new SvelteMap<string, string>();
  private readonly asked = new Set<string>();

  /** Reads the names of `ids` not known yet; call it from an effect, not while rendering. */
  load(ids: readonly (string | null)[]): void {
    if (!session.access.has('user.read')) return;
    for (const id of ids) {
      if (!id || id === session.user?.id || this.asked.has(id)) continue;
      this.asked.add(id);
      api.call('GET /xapi/v1/users/{id}', { path: { id } }).then(
        (user) => this.names.set(id, user.name || user.email),
        // An API key's id or a user of another account: there is no name to show.
        () => undefined,
      );
    }
  }

  /** The name for `id`, or null while unknown or not readable. */
  get(id: string | null): string | null {
    if (!id) return null;
    if (id === session.user?.id) return session.user.name || session.user.email;
    return this.names.get(id) ?? null;
  }
}

export const userNames = new UserNames();
