import { routeQuery } from './route-match';
import { unsavedChanges } from './unsaved-changes.svelte';

/**
 * A hash router: `#/path` works from any URL the server answers with the console (and from a
 * file:// or Electron window), needs no server rewrite rules, and keeps the browser history.
 * A page change while an editor holds unsaved changes asks first (lib/unsaved-changes.ts).
 */
class Router {
  path = $state(currentPath());
  /** The route's query (`#/twins/map?pitch=30`): view parameters a page may read. */
  query = $state(currentQuery());

  constructor() {
    window.addEventListener('hashchange', (event) => {
      const next = currentPath();
      if (!unsavedChanges.mayLeave(this.path, next)) {
        // Stay: the editor's address comes back without a history entry or another hashchange.
        history.replaceState(history.state, '', event.oldURL);
        return;
      }
      this.path = next;
      this.query = currentQuery();
    });
  }

  navigate(path: string): void {
    if (currentPath() === path) return;
    window.location.hash = `#${path}`;
  }
}

function currentPath(): string {
  const hash = window.location.hash.replace(/^#/, '');
  return hash.startsWith('/') ? hash.split('?')[0]! : '/';
}

const currentQuery = () => routeQuery(window.location.hash);

export const router = new Router();

export { matchRoute } from './route-match';
