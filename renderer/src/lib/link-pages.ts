/**
 * The pages the server's one-time links open outside the console's hash routes:
 * `<publicUrl>/onboarding?token=…` (printed at the first start) and `<publicUrl>/invitation?token=…`
 * (mailed or logged for an invited user, users/invitation.service.ts). The page is the address's
 * last path segment, since `STELLWERK_PUBLIC_URL` may carry a path of its own.
 */
export type LinkPage = 'onboarding' | 'invitation';

interface Address {
  pathname: string;
  search: string;
}

function pageOf(pathname: string): LinkPage | null {
  const last = pathname.replace(/\/+$/, '').split('/').at(-1);
  return last === 'onboarding' || last === 'invitation' ? last : null;
}

/** The token of an invitation link, or null when the address is not one. */
export function invitationToken(address: Address): string | null {
  if (pageOf(address.pathname) !== 'invitation') return null;
  const token = new URLSearchParams(address.search).get('token')?.trim();
  return token ? token : null;
}

/**
 * The address once a link has done its work: the console's own root (with the prefix the link had)
 * without the spent token, so reloading or bookmarking it opens the console; at `hash` if given.
 */
export function consoleAddress(href: string, hash?: string): string {
  const url = new URL(href);
  const page = pageOf(url.pathname);
  if (page) url.pathname = url.pathname.replace(/\/+$/, '').slice(0, -page.length) || '/';
  url.searchParams.delete('token');
  if (hash !== undefined) url.hash = hash;
  return url.toString();
}
