import type { EntityManager } from '@mikro-orm/postgresql';

/** A twin's place on the map. */
export interface TwinLocation {
  id: string;
  latitude: number;
  longitude: number;
}

/**
 * Reads of the twins domain for the weather connector kind: the active twins of `accountId` that
 * have coordinates (with `tag`, only those tagged so), at most `limit`, in id order so the same
 * twins are chosen on every poll. Callers poll for the connector of that account.
 */
export async function twinLocations(
  em: EntityManager,
  accountId: string,
  options: { tag?: string; limit: number },
): Promise<TwinLocation[]> {
  const tagged = options.tag !== undefined;
  return em.getConnection().execute<TwinLocation[]>(
    `SELECT id, latitude, longitude FROM digital_twins
      WHERE account_id = ? AND status = 'active' AND latitude IS NOT NULL AND longitude IS NOT NULL
      ${tagged ? 'AND ? = ANY(tags)' : ''}
      ORDER BY id LIMIT ?`,
    tagged ? [accountId, options.tag, options.limit] : [accountId, options.limit],
  );
}
