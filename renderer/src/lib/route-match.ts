/**
 * The route for `path`: an exact key (`/devices`) or a pattern with `:name` segments
 * (`/devices/:id`), whose values come back decoded in `params`. Exact keys win.
 */
export function matchRoute<T>(
  routes: Record<string, T>,
  path: string,
): { value: T; params: Record<string, string> } | undefined {
  if (Object.hasOwn(routes, path)) return { value: routes[path]!, params: {} };
  const segments = path.split('/');
  for (const [pattern, value] of Object.entries(routes)) {
    const parts = pattern.split('/');
    if (parts.length !== segments.length || !pattern.includes(':')) continue;
    const params: Record<string, string> = {};
    const matches = parts.every((part, i) => {
      if (part.startsWith(':')) {
        if (!segments[i]) return false;
        params[part.slice(1)] = decodeURIComponent(segments[i]);
        return true;
      }
      return part === segments[i];
    });
    if (matches) return { value, params };
  }
  return undefined;
}

/** The query of a console route: the hash router keeps it after the path (`#/twins/map?pitch=30`). */
export function routeQuery(hash: string): string {
  const start = hash.indexOf('?');
  return start < 0 ? '' : hash.slice(start + 1);
}
