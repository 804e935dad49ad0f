import { normalisePath } from './lwm2m-content.js';

/**
 * What a client tells the server when it registers or updates (LwM2M 1.1 TS Core 6.2.1): the query
 * of `POST /rd?ep=…&lt=…&lwm2m=…&b=…` and the CoRE link-format body listing its objects.
 */

export interface RegisterParams {
  endpoint?: string;
  lifetimeSeconds?: number;
  version?: string;
  binding?: string;
}

/** The lifetime LwM2M assumes when the client gives none. */
export const DEFAULT_LIFETIME_SECONDS = 86_400;
const MAX_LIFETIME_SECONDS = 30 * 86_400;
const MAX_LINKS = 500;
/** Endpoint names are device ids: 1 to 200 characters, none of them a control character. */
const isEndpointName = (name: string) =>
  name.length >= 1 && name.length <= 200 && [...name].every((c) => c >= ' ' && c !== '\u007f');

export class RegisterError extends Error {}

/** The query of a register or update request; a wrong value is a RegisterError (answered 4.00). */
export function registerParams(url: string): RegisterParams {
  let query: URLSearchParams;
  try {
    query = new URL(url, 'coap://server').searchParams;
  } catch {
    throw new RegisterError('the request URI cannot be read');
  }
  const out: RegisterParams = {};
  const ep = query.get('ep');
  if (ep !== null) {
    if (!isEndpointName(ep))
      throw new RegisterError('the endpoint name must be 1 to 200 printable characters');
    out.endpoint = ep;
  }
  const lt = query.get('lt');
  if (lt !== null) {
    const seconds = Number(lt);
    if (!/^\d{1,9}$/.test(lt) || seconds < 1 || seconds > MAX_LIFETIME_SECONDS)
      throw new RegisterError(`the lifetime must be 1 to ${MAX_LIFETIME_SECONDS} seconds`);
    out.lifetimeSeconds = seconds;
  }
  const version = query.get('lwm2m');
  if (version !== null) out.version = version.slice(0, 10);
  const binding = query.get('b');
  if (binding !== null) out.binding = binding.slice(0, 10);
  return out;
}

/**
 * The object and object-instance paths of a link-format body (`</1/0>,</3/0>;ver=1.1,</3303/0>`),
 * without the root link `</>;rt="oma.lwm2m"` and anything that is not an LwM2M path.
 */
export function objectLinks(body: Buffer): string[] {
  const links: string[] = [];
  for (const match of body.toString('utf8').matchAll(/<([^>]*)>/g)) {
    const path = normalisePath(match[1]!);
    if (path !== undefined && !links.includes(path)) links.push(path);
    if (links.length >= MAX_LINKS) break;
  }
  return links;
}

/** Whether the client's links offer `path` (its object, or the object instance it is in). */
export function offers(links: readonly string[], path: string): boolean {
  const [object, instance] = path.split('/');
  return links.some((link) => {
    const [o, i] = link.split('/');
    return o === object && (i === undefined || instance === undefined || i === instance);
  });
}
