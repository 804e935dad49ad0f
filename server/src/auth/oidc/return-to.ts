import { errors } from '../../platform/errors.js';

/**
 * Where to send the browser after a federated login: a path on Stellwerk itself, never another
 * site (open-redirect protection). `//evil.example`, `/\evil.example`, `https://…` and anything
 * that resolves to another origin are refused; the default is `/`.
 */
export function safeReturnTo(value: string | undefined, publicUrl: string): string {
  if (value === undefined || value === '') return '/';
  const refuse = () =>
    errors.validation('returnTo must be a path on this site, such as /dashboards', [{ path: '/returnTo' }]);
  // Browsers treat a backslash like a slash and ignore tabs and newlines inside URLs.
  const control = [...value].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);
  if (!value.startsWith('/') || value.startsWith('//') || value.includes('\\') || control) throw refuse();
  const base = new URL(publicUrl);
  let target: URL;
  try {
    target = new URL(value, base);
  } catch {
    throw refuse();
  }
  if (target.origin !== base.origin) throw refuse();
  return `${target.pathname}${target.search}${target.hash}`;
}
