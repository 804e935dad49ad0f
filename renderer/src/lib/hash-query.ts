/**
 * The query part of the hash route (`#/devices?healthState=Critical`): how a link (the overview's
 * counts, an alarm e-mail) opens a list with its filter set. Read once when the page opens.
 */
export function hashParam(name: string): string | null {
  return new URLSearchParams(splitHash(window.location.hash)[1]).get(name);
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

/**
 * Sets the given parameters in the current address's query (an empty value removes one) and leaves
 * the others, while the address is still `path`'s. `replaceState`: a list's search adds no history
 * entry per keystroke, and fires no `hashchange` (the router would ask about unsaved changes).
 */
export function replaceHashParams(path: string, params: Record<string, string | undefined>): void {
  const [current, query] = splitHash(window.location.hash);
  if (current !== path) return;
  const search = new URLSearchParams(query);
  for (const [name, value] of Object.entries(params)) {
    if (value) search.set(name, value);
    else search.delete(name);
  }
  const rest = search.toString();
  const next = `#${path}${rest ? `?${rest}` : ''}`;
  if (next !== window.location.hash) history.replaceState(history.state, '', next);
}

/** The route path of the current address (`#/devices?q=x` → `/devices`). */
export function hashPath(): string {
  return splitHash(window.location.hash)[0];
}

function splitHash(hash: string): [string, string] {
  const [path = '', query = ''] = hash.replace(/^#/, '').split('?');
  return [path, query];
}
