/**
 * The query part of the hash route (`#/devices?healthState=Critical`): how a link (the overview's
 * counts, an alarm e-mail) opens a list with its filter set. Read once when the page opens.
 */
export function hashParam(name: string): string | null {
  return new URLSearchParams(window.location.hash.split('?')[1] ?? '').get(name);
}

/** `hashParam` limited to the values a filter offers; anything else is no filter. */
export function hashChoice<T extends string>(name: string, choices: readonly T[]): T | null {
  const value = hashParam(name);
  return value !== null && (choices as readonly string[]).includes(value) ? (value as T) : null;
}

/** A hash route with query parameters, leaving out empty ones. */
export function hashLink(path: string, params: Record<string, string | undefined> = {}): string {
  const query = new URLSearchParams(
    Object.entries(params).filter((entry): entry is [string, string] => !!entry[1]),
  ).toString();
  return `#${path}${query ? `?${query}` : ''}`;
}
