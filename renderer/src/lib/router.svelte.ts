/**
 * A hash router: `#/path` works from any URL the server answers with the console (and from a
 * file:// or Electron window), needs no server rewrite rules, and keeps the browser history.
 */
class Router {
  path = $state(currentPath());

  constructor() {
    window.addEventListener('hashchange', () => (this.path = currentPath()));
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

export const router = new Router();

export { matchRoute } from './route-match';
