import type { TwinListReply, TwinStatus } from './twin-api';

type ListedTwin = TwinListReply['data'][number];
export type Located<T extends { latitude: number | null; longitude: number | null }> = T & {
  latitude: number;
  longitude: number;
};

export const TWIN_STATUSES: readonly TwinStatus[] = ['active', 'inactive'];

/**
 * The map page's filter: twins carrying every chosen tag (the spec: tags are for map filtering) and
 * having any chosen status. The server applies it (`filter[tag]`, `filter[status]`), so the page
 * never loads twins it does not show.
 */
export interface MapFilter {
  tags: string[];
  statuses: TwinStatus[];
}

export const NO_FILTER: MapFilter = { tags: [], statuses: [] };

export const isFiltered = (filter: MapFilter) => filter.tags.length > 0 || filter.statuses.length > 0;

/** The list with `value` added, or removed when it was there; order as chosen. */
export function toggled<T>(list: readonly T[], value: T): T[] {
  return list.includes(value) ? list.filter((other) => other !== value) : [...list, value];
}

/** Sorted, distinct tags of the twins, plus those chosen (a chosen tag stays offered when nothing matches it). */
export function tagChoices(twins: readonly ListedTwin[], chosen: readonly string[] = []): string[] {
  return [...new Set([...twins.flatMap((twin) => twin.tags), ...chosen])].sort((a, b) => a.localeCompare(b));
}

export function located<T extends { latitude: number | null; longitude: number | null }>(
  twins: readonly T[],
): Located<T>[] {
  return twins.filter((twin): twin is Located<T> => twin.latitude !== null && twin.longitude !== null);
}
