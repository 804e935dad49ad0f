import type { EntityManager } from '@mikro-orm/postgresql';

export interface SelectedState {
  id: string;
  twinId: string;
  key: string;
  title: string;
  unit: string | null;
}

/**
 * Reads of the states domain for export plans: the data states of `twinIds` with one of `keys`
 * (every state when `keys` is empty), ordered by twin and key. Callers have selected the twins
 * within the plan's account and scopes. Ids travel as one JSON parameter: a selection can hold more
 * twins than a statement takes parameters.
 */
export async function statesOfTwins(
  em: EntityManager,
  twinIds: string[],
  keys: string[],
): Promise<SelectedState[]> {
  if (twinIds.length === 0) return [];
  const byKey = keys.length > 0;
  const rows = await em
    .getConnection()
    .execute<Array<{ id: string; twin_id: string; key: string; title: string; unit: string | null }>>(
      `SELECT id, twin_id, key, title, unit FROM data_states
        WHERE twin_id = ANY(ARRAY(SELECT jsonb_array_elements_text(?::jsonb)::uuid))
          ${byKey ? 'AND key = ANY(ARRAY(SELECT jsonb_array_elements_text(?::jsonb)))' : ''}
        ORDER BY twin_id, key`,
      byKey ? [JSON.stringify(twinIds), JSON.stringify(keys)] : [JSON.stringify(twinIds)],
    );
  return rows.map((r) => ({ id: r.id, twinId: r.twin_id, key: r.key, title: r.title, unit: r.unit }));
}
