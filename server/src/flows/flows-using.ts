import type { EntityManager } from '@mikro-orm/postgresql';

/** What blocks a deletion: the flows (at most 20, by title) that use a step or a connector. */
export async function flowsUsing(
  em: EntityManager,
  what: { step: { type: 'filter' | 'transformer'; id: string } } | { connectorId: string },
): Promise<Array<{ type: 'integrationFlow'; id: string; title: string }>> {
  const rows =
    'step' in what
      ? await em
          .getConnection()
          .execute<Array<{ id: string; title: string }>>(
            'SELECT id, title FROM integration_flows WHERE steps @> ?::jsonb ORDER BY title, id LIMIT 20',
            [JSON.stringify([what.step])],
          )
      : await em.getConnection().execute<Array<{ id: string; title: string }>>(
          // As a target, or as a packet source.
          `SELECT id, title FROM integration_flows
            WHERE targets @> ?::jsonb OR source -> 'connectorIds' @> ?::jsonb
            ORDER BY title, id LIMIT 20`,
          [JSON.stringify([{ connectorId: what.connectorId }]), JSON.stringify([what.connectorId])],
        );
  return rows.map((r) => ({ type: 'integrationFlow', id: r.id, title: r.title }));
}
