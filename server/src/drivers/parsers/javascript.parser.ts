import {
  ParseError,
  type CompiledParser,
  type ConfigProblem,
  type Decoded,
  type EncodedDownlink,
  type PacketMeta,
  type ParserPlugin,
} from '../parser.types.js';
import {
  DECODE_DOWNLINK,
  DECODE_UPLINK,
  downlinkInput,
  ENCODE_DOWNLINK,
  LEGACY_DECODERS,
  LEGACY_ENCODERS,
  legacyDownlinkInput,
  legacyUplinkInput,
  readDecoded,
  readEncoded,
  uplinkInput,
  variablesOf,
} from './codec.js';
import { integerProblem, problem } from '../../platform/http/problem-detail.js';
import { PARSE_ENTRY, Sandbox, type SandboxEntry, type SandboxLimits } from './sandbox.js';
import { isPlainObject, toValues } from './values.js';

/**
 * User JavaScript in one of these forms, the first the script defines winning:
 * - a LoRa Alliance TS013 codec, pasted unchanged: `decodeUplink(input)` with
 *   `input = {bytes, fPort, recvTime, variables}` returning `{data, warnings?, errors?}`, and
 *   optionally `encodeDownlink(input)` and `decodeDownlink(input)` (codec.ts);
 * - `function parse(bytes, meta) { return { … }; }` where `meta` is what the ingest path knows
 *   about the packet, returning an object or an array of at most 50 objects;
 * - a decoder written for a network server before TS013, pasted unchanged: ChirpStack v3's
 *   `Decode(fPort, bytes, variables)` or The Things Network V2's `Decoder(bytes, port)`, returning
 *   the decoded object, with their `Encode(fPort, obj, variables)` / `Encoder(object, port)`
 *   returning the bytes of a downlink (used when the script has no `encodeDownlink`).
 * `bytes` is a plain array of numbers (0–255). The script runs in a QuickJS sandbox (sandbox.ts)
 * with limits the driver may set within the maxima below; its `console.*` lines come back with
 * each result (the driver test shows them, ingest writes them to the debug log).
 *
 * Config: `{ code, timeoutMs?, memoryLimitMb?, stackLimitKb?, variables? }`; `variables` is the
 * codec's `input.variables`, overlaid by the device's.
 */

export const SCRIPT_LIMITS = {
  timeoutMs: { default: 50, min: 1, max: 1000 },
  memoryLimitMb: { default: 16, min: 1, max: 64 },
  stackLimitKb: { default: 256, min: 32, max: 1024 },
} as const;

/** Vendor codecs with their lookup tables reach hundreds of KiB. */
export const MAX_SCRIPT_LENGTH = 1024 * 1024;

const DRIVER_ENTRY: SandboxEntry = {
  ...PARSE_ENTRY,
  others: [
    { name: DECODE_UPLINK, params: ['input'], recvTimeAsDate: true, entry: true },
    { name: ENCODE_DOWNLINK, params: ['input'] },
    { name: DECODE_DOWNLINK, params: ['input'], recvTimeAsDate: true },
    ...LEGACY_DECODERS.map((f) => ({ ...f, entry: true })),
    ...LEGACY_ENCODERS,
  ],
};

/** Sandboxes kept alive at once; the least recently used one is released beyond this. */
const MAX_LIVE_SANDBOXES = 32;

function validateScript(config: Record<string, unknown>): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const { code } = config;
  if (typeof code !== 'string' || code.trim() === '') {
    const message = 'code is required: function decodeUplink(input) or function parse(bytes, meta)';
    problems.push(problem('/code', 'required', {}, message));
  } else if (code.length > MAX_SCRIPT_LENGTH) {
    const message = `code is longer than ${MAX_SCRIPT_LENGTH} characters`;
    problems.push(problem('/code', 'maxLength', { limit: MAX_SCRIPT_LENGTH }, message));
  }
  if (config.variables !== undefined && !isPlainObject(config.variables)) {
    problems.push(problem('/variables', 'type', { type: 'object' }, 'variables must be an object'));
  }
  for (const [name, range] of Object.entries(SCRIPT_LIMITS)) {
    const value = config[name];
    if (value === undefined) continue;
    const message = `${name} must be an integer from ${range.min} to ${range.max}`;
    const found = integerProblem(`/${name}`, value, range.min, range.max, message);
    if (found) problems.push(found);
  }
  return problems;
}

function limitsOf(config: Record<string, unknown>): SandboxLimits {
  const pick = (name: keyof typeof SCRIPT_LIMITS) =>
    typeof config[name] === 'number' ? config[name] : SCRIPT_LIMITS[name].default;
  return {
    timeoutMs: pick('timeoutMs'),
    memoryLimitMb: pick('memoryLimitMb'),
    stackLimitKb: pick('stackLimitKb'),
  };
}

/** Live sandboxes in least-recently-used order (a Map keeps insertion order). */
const live = new Map<ScriptParser, true>();

class ScriptParser implements CompiledParser {
  /** The TS013 functions and `parse` the script defines, from its first load. */
  private readonly defined: ReadonlySet<string>;

  constructor(
    private readonly code: string,
    private readonly limits: SandboxLimits,
    private readonly variables: unknown,
    private sandbox: Sandbox | null,
  ) {
    this.defined = sandbox?.defined ?? new Set();
    if (sandbox) this.touch();
  }

  async parse(payload: Buffer, meta: PacketMeta = {}) {
    return (await this.decode(payload, meta)).values;
  }

  async decode(payload: Buffer, meta: PacketMeta = {}): Promise<Decoded> {
    if (this.defined.has(DECODE_UPLINK)) {
      const { result, logs } = await this.call(
        DECODE_UPLINK,
        uplinkInput(payload, meta, variablesOf(this.variables, meta)),
      );
      return { ...readDecoded(result, DECODE_UPLINK), logs };
    }
    const legacy = this.defined.has(PARSE_ENTRY.name)
      ? undefined
      : LEGACY_DECODERS.find((f) => this.defined.has(f.name));
    if (legacy) {
      const input = legacyUplinkInput(payload, meta, variablesOf(this.variables, meta));
      const { result, logs } = await this.call(legacy.name, input);
      return { ...readDecoded({ data: result }, legacy.name), logs };
    }
    const { result, logs } = await this.call(
      PARSE_ENTRY.name,
      JSON.stringify({ bytes: Array.from(payload), meta }),
    );
    return { values: toValues(result, 'The parser script result', 'PARSER_ERROR'), logs };
  }

  async encodeDownlink(data: unknown, meta: PacketMeta = {}): Promise<EncodedDownlink> {
    const legacy = this.defined.has(ENCODE_DOWNLINK)
      ? undefined
      : LEGACY_ENCODERS.find((f) => this.defined.has(f.name));
    if (legacy) {
      const input = legacyDownlinkInput(data, meta, variablesOf(this.variables, meta));
      const { result, logs } = await this.call(legacy.name, input);
      return { ...readEncoded({ bytes: result }, legacy.name), logs };
    }
    this.require(ENCODE_DOWNLINK);
    const { result, logs } = await this.call(
      ENCODE_DOWNLINK,
      downlinkInput(data, variablesOf(this.variables, meta)),
    );
    return { ...readEncoded(result), logs };
  }

  async decodeDownlink(payload: Buffer, meta: PacketMeta = {}): Promise<Decoded> {
    this.require(DECODE_DOWNLINK);
    const { result, logs } = await this.call(
      DECODE_DOWNLINK,
      uplinkInput(payload, meta, variablesOf(this.variables, meta)),
    );
    return { ...readDecoded(result, DECODE_DOWNLINK), logs };
  }

  private require(name: string): void {
    if (!this.defined.has(name)) {
      const legacy = name === ENCODE_DOWNLINK ? ' (nor Encode or Encoder)' : '';
      throw new ParseError(
        `The driver's script does not define function ${name}(input)${legacy}`,
        'PARSER_ERROR',
      );
    }
  }

  /** One call into the sandbox; its console lines come back with the result or on the error. */
  private async call(name: string, input: string): Promise<{ result: unknown; logs: string[] }> {
    this.sandbox ??= await Sandbox.create(this.code, this.limits, DRIVER_ENTRY);
    const sandbox = this.sandbox;
    this.touch();
    let text: string;
    try {
      text = sandbox.call(input, name);
    } catch (error) {
      if (error instanceof ParseError) error.logs = sandbox.takeLogs();
      throw error;
    } finally {
      if (sandbox.broken) this.release();
    }
    return { result: JSON.parse(text) as unknown, logs: sandbox.takeLogs() };
  }

  /** Frees the sandbox; the next parse builds a fresh one from the code. */
  release(): void {
    live.delete(this);
    this.sandbox?.dispose();
    this.sandbox = null;
  }

  dispose(): void {
    this.release();
  }

  private touch(): void {
    live.delete(this);
    live.set(this, true);
    while (live.size > MAX_LIVE_SANDBOXES) live.keys().next().value!.release();
  }
}

async function compileScript(config: Record<string, unknown>): Promise<ScriptParser> {
  const problems = validateScript(config);
  if (problems.length > 0) {
    throw new ParseError(
      `Invalid parser script settings: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}`,
    );
  }
  const code = config.code as string;
  const limits = limitsOf(config);
  return new ScriptParser(code, limits, config.variables, await Sandbox.create(code, limits, DRIVER_ENTRY));
}

export const javascriptParser: ParserPlugin = {
  type: 'javascript',
  runsUserCode: true,
  validate: validateScript,
  compile: compileScript,
  parse: async (payload, config, meta) => {
    const parser = await compileScript(config);
    try {
      return await parser.parse(payload, meta);
    } finally {
      parser.dispose();
    }
  },
};

/** For tests and metrics: how many sandboxes are alive. */
export const liveSandboxCount = (): number => live.size;
