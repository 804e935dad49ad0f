import type { ParserConfig, TargetVariable, ValueType } from './device-driver.entity.js';
import { stateEntries, wholeKeys } from '../ingest/state-keys.js';
import {
  ParseError,
  type CompiledParser,
  type Decoded,
  type EncodedDownlink,
  type PacketMeta,
  type ParsedValues,
} from './parser.types.js';
import { parserFor } from './parsers/index.js';

/** What parsing needs of a driver; the ingest path may hold just these columns. */
export interface DriverForParsing {
  id: string;
  updatedAt: Date;
  parser: ParserConfig;
  targetVariables: readonly TargetVariable[];
}

export interface ParseOutcome {
  /** Always a list: one item for an object payload, up to 50 for an array payload. */
  values: ParsedValues[];
  /** Values that do not fit their target variable's type; the values are kept as parsed. */
  warnings: string[];
  /** The device states each item becomes (nested values under dotted keys), as ingest writes them. */
  states: Array<Record<string, unknown>>;
  /** A codec's `warnings` (kept on the packet). */
  codecWarnings: string[];
  /** A codec's `errors`: ingest marks the packet failed with them; `values` is empty. */
  errors: string[];
  /** The script's `console.*` lines. */
  logs: string[];
}

/** Compiled parsers kept at once; beyond this the least recently used one is dropped. */
const MAX_CACHED = 1000;

interface CacheEntry {
  version: number;
  compiled: Promise<CompiledParser>;
}

const typeOf = (value: unknown): ValueType | 'null' =>
  value === null ? 'null' : typeof value === 'object' ? 'object' : (typeof value as ValueType);

/** The states of each item, as ingest writes them (state-keys.ts). */
export const statesOf = (values: ParsedValues[], targetVariables: readonly TargetVariable[]) => {
  const keep = wholeKeys(targetVariables);
  return values.map((item) => stateEntries(item, keep));
};

/** Type mismatches between the states of parsed values and target variables, one message each. */
export function typeWarnings(values: ParsedValues[], targetVariables: readonly TargetVariable[]): string[] {
  const warnings: string[] = [];
  statesOf(values, targetVariables).forEach((states, index) => {
    for (const variable of targetVariables) {
      // A nested object under a scalar variable's key became dotted keys: still worth a warning.
      const item = values[index]!;
      const value = states.has(variable.key)
        ? states.get(variable.key)
        : Object.hasOwn(item, variable.key)
          ? item[variable.key]
          : undefined;
      if (value === undefined) continue;
      const actual = typeOf(value);
      if (actual === 'null' || actual === variable.type) continue;
      const where = values.length > 1 ? ` (item ${index})` : '';
      warnings.push(
        `"${variable.key}"${where} is ${actual === 'object' ? 'an object' : `a ${actual}`}; the target variable expects ${variable.type}`,
      );
    }
  });
  return warnings;
}

/**
 * Turns packet payloads into values with a driver's parser. Compiled parsers are cached per
 * driver id and `updatedAt`, so an edited driver is recompiled on its next packet on every
 * node without any invalidation message. Throws ParseError (code PARSE_ERROR or PARSER_*).
 */
export class DriverParsing {
  private readonly cache = new Map<string, CacheEntry>();

  async parse(driver: DriverForParsing, payload: Buffer, meta?: PacketMeta): Promise<ParseOutcome> {
    const cached = this.cache.get(driver.id);
    // A reader holding an older row than the cache: parse without evicting the newer parser.
    if (cached && cached.version > driver.updatedAt.getTime()) {
      return this.parseOnce(driver.parser, driver.targetVariables, payload, meta);
    }
    const compiled = await this.compiled(driver);
    return this.outcome(await decode(compiled, payload, meta), driver.targetVariables);
  }

  /**
   * Encodes downlink `data` with the driver's codec (`encodeDownlink`); the codec's own errors come
   * back in the result. Throws ParseError when the driver has no such function or the script fails.
   */
  async encodeDownlink(driver: DriverForParsing, data: unknown, meta?: PacketMeta): Promise<EncodedDownlink> {
    const compiled = await this.compiled(driver);
    if (!compiled.encodeDownlink) {
      throw new ParseError(
        `A ${driver.parser.type} parser does not define function encodeDownlink(input)`,
        'PARSER_ERROR',
      );
    }
    return compiled.encodeDownlink(data, meta);
  }

  /** Parses with a configuration that is not stored (the parser test endpoint); nothing is cached. */
  async parseOnce(
    parser: ParserConfig,
    targetVariables: readonly TargetVariable[],
    payload: Buffer,
    meta?: PacketMeta,
  ): Promise<ParseOutcome> {
    const compiled = await compile(parser);
    try {
      return this.outcome(await decode(compiled, payload, meta), targetVariables);
    } finally {
      compiled.dispose?.();
    }
  }

  /** Drops a driver's compiled parser (deleted driver). */
  forget(driverId: string): void {
    const entry = this.cache.get(driverId);
    this.cache.delete(driverId);
    if (entry)
      void entry.compiled.then(
        (c) => c.dispose?.(),
        () => undefined,
      );
  }

  /** Frees every compiled parser (server stop). */
  async stop(): Promise<void> {
    for (const id of [...this.cache.keys()]) this.forget(id);
  }

  get size(): number {
    return this.cache.size;
  }

  private compiled(driver: DriverForParsing): Promise<CompiledParser> {
    const version = driver.updatedAt.getTime();
    const entry = this.cache.get(driver.id);
    if (entry && entry.version === version) {
      // Re-inserted: Map order is the recency order for eviction.
      this.cache.delete(driver.id);
      this.cache.set(driver.id, entry);
      return entry.compiled;
    }
    if (entry) this.forget(driver.id);
    const compiled = compile(driver.parser);
    this.cache.set(driver.id, { version, compiled });
    // A config that does not compile is not cached: the next packet tries again (and fails the same way).
    compiled.catch(() => {
      if (this.cache.get(driver.id)?.compiled === compiled) this.cache.delete(driver.id);
    });
    while (this.cache.size > MAX_CACHED) this.forget(this.cache.keys().next().value!);
    return compiled;
  }

  private outcome(decoded: Decoded, targetVariables: readonly TargetVariable[]): ParseOutcome {
    const values = Array.isArray(decoded.values) ? decoded.values : [decoded.values];
    const states = statesOf(values, targetVariables).map((entries) => {
      const out: Record<string, unknown> = {};
      for (const [key, value] of entries) {
        Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
      }
      return out;
    });
    return {
      values,
      warnings: typeWarnings(values, targetVariables),
      states,
      codecWarnings: decoded.warnings ?? [],
      errors: decoded.errors ?? [],
      logs: decoded.logs ?? [],
    };
  }
}

const decode = async (compiled: CompiledParser, payload: Buffer, meta?: PacketMeta): Promise<Decoded> =>
  compiled.decode ? compiled.decode(payload, meta) : { values: await compiled.parse(payload, meta) };

async function compile(parser: ParserConfig): Promise<CompiledParser> {
  const plugin = parserFor(parser.type);
  if (!plugin) throw new ParseError(`Unknown parser type "${parser.type}"`);
  if (plugin.compile) return plugin.compile(parser);
  const problems = plugin.validate(parser);
  if (problems.length > 0) {
    throw new ParseError(
      `Invalid ${parser.type} parser settings: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}`,
    );
  }
  return { parse: (payload, meta) => plugin.parse(payload, parser, meta) };
}
