import Ajv, { type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import type { TObject, TSchema } from 'typebox';
import { problem } from '../../platform/http/problem-detail.js';
import type { ConfigProblem, ConnectorKind, ConnectorKindDescriptor, KindDeps } from '../connector-kind.js';
import { maskSecrets, sealSecrets } from './config-fields.js';

/**
 * What the connector service needs of a kind, derived from its descriptor
 * (docs/adr/0074-connector-kind-descriptors.md): settings validation from the TypeBox schema plus
 * the kind's own `check`, and sealing/masking of the settings the schema marks `writeOnly`.
 */

// All errors, so a form can mark every wrong field at once; no defaults, coercion or removal:
// the stored settings are what the client sent.
// `verbose` gives each error its schema, to word a failed choice of constants as one problem.
const ajv = addFormats.default(new Ajv.default({ allErrors: true, strict: false, verbose: true }));

/** Keys whose values are treated as secrets in the free-form settings of planned kinds. */
const SECRET_KEY = /(password|secret|token|apikey|api_key|privatekey|private_key|clientkey|client_key)$/i;

/** Top-level settings the schema marks `writeOnly`: sealed when stored, masked when read. */
export function secretKeys(settings: TObject): string[] {
  return Object.entries(settings.properties as Record<string, TSchema & { writeOnly?: boolean }>)
    .filter(([, schema]) => schema.writeOnly === true)
    .map(([key]) => key);
}

const pathOf = (error: ErrorObject) =>
  `/config${error.instancePath}${error.keyword === 'required' ? `/${String(error.params.missingProperty)}` : ''}`;

/**
 * One problem per path, with Ajv's keyword and params. Ajv reports a failed `anyOf` once per
 * branch and once for the whole: a choice of constants becomes `enum` ("must be one of …");
 * otherwise the first branch's own complaint (not "must be null", the branch that lets a secret
 * be removed).
 */
function problems(errors: readonly ErrorObject[]): ConfigProblem[] {
  const byPath = new Map<string, ErrorObject[]>();
  for (const error of errors) byPath.set(pathOf(error), [...(byPath.get(pathOf(error)) ?? []), error]);
  return [...byPath].map(([path, list]) => {
    const choice = list.find((e) => e.keyword === 'anyOf');
    const branches = (choice?.schema ?? []) as Array<{ const?: unknown }>;
    if (choice && branches.every((b) => 'const' in b)) {
      const allowedValues = branches.map((b) => b.const);
      const message = `must be one of ${allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
      return problem(path, 'enum', { allowedValues }, message);
    }
    const own = list.find((e) => !['anyOf', 'const'].includes(e.keyword) && e.message !== 'must be null');
    const { keyword, params, message } = own ?? list[0]!;
    return { path, keyword, params, message: message ?? 'is invalid' };
  });
}

/** The position of a problem's top-level key in the schema, so problems come in form order. */
const orderOf = (keys: string[], path: string) => {
  const index = keys.indexOf(path.split('/')[2] ?? '');
  return index < 0 ? keys.length : index;
};

/** Schema problems, then the kind's own problems for paths the schema did not report; in form order. */
export function settingsValidator(
  descriptor: Pick<ConnectorKindDescriptor, 'settings' | 'check'>,
): (config: Record<string, unknown>) => ConfigProblem[] {
  const compiled = ajv.compile(descriptor.settings);
  const keys = Object.keys(descriptor.settings.properties);
  return (config) => {
    const found = compiled(config) ? [] : problems(compiled.errors ?? []);
    const seen = new Set(found.map((p) => p.path));
    for (const p of descriptor.check?.(config) ?? []) if (!seen.has(p.path)) found.push(p);
    return found
      .map((p, i) => ({ p, i }))
      .sort((a, b) => orderOf(keys, a.p.path) - orderOf(keys, b.p.path) || a.i - b.i)
      .map(({ p }) => p);
  };
}

/** The kind as the connector service uses it: descriptor + derived validation and secrets + runtime. */
export function buildKind(descriptor: ConnectorKindDescriptor, deps: KindDeps): ConnectorKind {
  const fixed = secretKeys(descriptor.settings);
  const keysOf = (config: Record<string, unknown>) =>
    descriptor.freeForm ? Object.keys(config).filter((k) => SECRET_KEY.test(k)) : fixed;
  return {
    descriptor,
    type: descriptor.type,
    direction: descriptor.direction,
    capabilities: descriptor.capabilities,
    validate: settingsValidator(descriptor),
    prepareConfig: (config, previous, ctx) =>
      sealSecrets(config, previous, [...new Set([...keysOf(config), ...keysOf(previous ?? {})])], ctx),
    publicConfig: (config) => maskSecrets(config, keysOf(config)),
    ...descriptor.runtime?.(deps),
  };
}
