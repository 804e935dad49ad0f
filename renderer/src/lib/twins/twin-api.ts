import { api } from '../../api/client';
import type { Query, Reply } from '../../api/generated';

export type Twin = Reply<'GET /xapi/v1/digital-twins/{id}'>;
export type TwinState = Reply<'GET /xapi/v1/states/{id}'>;
export type TwinListReply = Reply<'GET /xapi/v1/digital-twins'>;

export type TwinStatus = 'active' | 'inactive';

/** A twin named by its place in the hierarchy ("Plant North / Hall 2 / Pump 1"): titles repeat across sites. */
export const twinPathLabel = (twin: { hierarchy: Array<{ title: string }> }): string =>
  twin.hierarchy.map((step) => step.title).join(' / ');

/** The list query plus the filter parameters the typed query does not name (`filter[tag]`, docs/digital-twins.md). */
export interface TwinListQuery extends NonNullable<Query<'GET /xapi/v1/digital-twins'>> {
  /** Twins carrying every one of these tags. */
  tags?: string[];
  /** Twins with any of these statuses (empty: every status). */
  statuses?: TwinStatus[];
}

export function listTwins({ tags, statuses, ...query }: TwinListQuery): Promise<TwinListReply> {
  const filters = {
    ...(tags && tags.length > 0 ? { 'filter[tag]': tags } : {}),
    ...(statuses && statuses.length > 0 ? { 'filter[status]': statuses } : {}),
  };
  return api.call('GET /xapi/v1/digital-twins', {
    query: { ...query, ...filters },
  });
}

const PAGE = 500;
/** The tree loads at most this many twins; beyond it, search narrows the list. */
export const TREE_LIMIT = 5000;

/** Every twin (up to TREE_LIMIT) matching the filter, page by page; `onProgress(loaded, total)` after each page. */
export async function loadAllTwins(
  onProgress?: (loaded: number, total: number) => void,
  filter: Pick<TwinListQuery, 'tags' | 'statuses'> = {},
): Promise<{ twins: TwinListReply['data']; total: number }> {
  const twins: TwinListReply['data'] = [];
  let total: number;
  for (let page = 1; ; page++) {
    const reply = await listTwins({ page, pageSize: PAGE, sort: 'title', ...filter });
    twins.push(...reply.data);
    total = reply.meta.total;
    onProgress?.(twins.length, total);
    if (reply.data.length < PAGE || twins.length >= Math.min(total, TREE_LIMIT)) break;
  }
  return { twins, total };
}

export interface TreeNode {
  twin: TwinListReply['data'][number];
  children: TreeNode[];
}

/** Nodes by parent; a twin whose parent is not in the list (another scope, beyond the limit) becomes a root. */
export function buildTree(twins: TwinListReply['data']): TreeNode[] {
  const nodes = new Map(twins.map((twin) => [twin.id, { twin, children: [] as TreeNode[] }]));
  const roots: TreeNode[] = [];
  for (const node of nodes.values()) {
    const parent = node.twin.parentId ? nodes.get(node.twin.parentId) : undefined;
    (parent ? parent.children : roots).push(node);
  }
  return roots;
}
