import type { EntityManager } from '@mikro-orm/postgresql';
import type { ScopeFilter } from '../permission-scopes/scope-filter.js';
import { errors } from '../platform/errors.js';
import { problem } from '../platform/http/problem-detail.js';

/** A parent that is missing, in another account or hidden by the caller's scopes: one answer for all. */
export const parentNotAssigned = (parentId: string) =>
  errors.unprocessable(
    'CONFIG_NOT_ASSIGNED',
    `Parent twin ${parentId} is not a twin of this twin's account`,
    [{ ...problem('/parentId', 'notFound', { id: parentId }), id: parentId }],
  );

/**
 * The twin tree is stored twice: `parent_id` (the reference) and `path` (ids root → self, so
 * subtree and ancestor questions are one array test). These helpers keep `path` right when a twin
 * is created below a parent, moved or deleted. Callers run inside a transaction and call `lock`
 * first: hierarchy changes of one account are serialised, so two concurrent moves can neither
 * build a cycle nor leave a stale path behind.
 */
export class TwinHierarchy {
  constructor(private readonly em: () => EntityManager) {}

  async lock(accountId: string): Promise<void> {
    await this.em().execute('SELECT pg_advisory_xact_lock(hashtext(?))', [`digital-twins:${accountId}`]);
  }

  /** The stored path of a twin of `accountId`, or null when there is no such twin in that account. */
  async storedPath(accountId: string, twinId: string): Promise<string[] | null> {
    const rows = await this.em().execute<Array<{ path: string[] }>>(
      'SELECT path FROM digital_twins WHERE id = ? AND account_id = ?',
      [twinId, accountId],
    );
    return rows[0]?.path ?? null;
  }

  /**
   * The path a twin gets below `parentId` (null: a root twin). The parent must be a twin of the same
   * account (422 CONFIG_NOT_ASSIGNED otherwise) and must not be the twin or one of its descendants
   * (422 TWIN_HIERARCHY_CYCLE).
   */
  async pathBelow(accountId: string, twinId: string, parentId: string | null): Promise<string[]> {
    if (parentId === null) return [twinId];
    const parentPath = await this.storedPath(accountId, parentId);
    if (!parentPath) throw parentNotAssigned(parentId);
    if (parentPath.includes(twinId)) {
      throw errors.unprocessable(
        'TWIN_HIERARCHY_CYCLE',
        parentId === twinId
          ? 'A twin cannot be its own parent'
          : 'A twin cannot be moved below one of its own descendants',
        [{ path: '/parentId', id: parentId, parentPath }],
      );
    }
    return [...parentPath, twinId];
  }

  /** Rewrites the path of a twin and of all its descendants: `oldPath` prefix → `newPath`. */
  async moveSubtree(accountId: string, oldPath: string[], newPath: string[]): Promise<void> {
    const twinId = oldPath[oldPath.length - 1]!;
    // knex expands an array binding into a value list, hence ARRAY[?]; path[n:] is empty for the twin itself.
    await this.em().execute(
      `UPDATE digital_twins SET path = ARRAY[?]::uuid[] || path[?::int:]
        WHERE account_id = ? AND ?::uuid = ANY(path)`,
      [newPath, oldPath.length + 1, accountId, twinId],
      'run',
    );
  }

  /** Before deleting a twin: its children become root twins (the FK sets their parent_id to null). */
  async detachChildren(accountId: string, path: string[]): Promise<void> {
    const twinId = path[path.length - 1]!;
    await this.em().execute(
      `UPDATE digital_twins SET path = path[?::int:]
        WHERE account_id = ? AND ?::uuid = ANY(path) AND id <> ?`,
      [path.length + 1, accountId, twinId, twinId],
      'run',
    );
  }

  /**
   * `{id, title}` from the root down to each twin, for several twins in one query. Ancestors the
   * caller's permission scopes hide are left out, as a hidden twin is everywhere else.
   */
  async lineages(
    paths: string[][],
    visible: ScopeFilter,
  ): Promise<Array<Array<{ id: string; title: string }>>> {
    const ids = [...new Set(paths.flat())];
    if (ids.length === 0) return paths.map(() => []);
    const rows = await this.em().execute<Array<{ id: string; title: string; scope: string | null }>>(
      'SELECT id, title, effective_permission_scope_id AS scope FROM digital_twins WHERE id IN (?)',
      [ids],
    );
    const titles = new Map(rows.filter((r) => visible.allows(r.scope)).map((r) => [r.id, r.title]));
    return paths.map((path) =>
      path.filter((id) => titles.has(id)).map((id) => ({ id, title: titles.get(id)! })),
    );
  }
}
