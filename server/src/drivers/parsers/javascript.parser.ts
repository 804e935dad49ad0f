import { ParseError, type CompiledParser, type ConfigProblem, type ParserPlugin } from '../parser.types.js';
import { Sandbox, type SandboxLimits } from './sandbox.js';
import { toValues } from './values.js';

/**
 * User JavaScript: `function parse(bytes, meta) { return { … }; }` where `bytes` is a plain
 * array of numbers (0–255) and `meta` what the ingest path knows about the packet. It returns an
 * object or an array of at most 50 objects of JSON values. It runs in a QuickJS sandbox (see
 * sandbox.ts) with limits the driver may set within the maxima below.
 *
 * Config: `{ code, timeoutMs?, memoryLimitMb?, stackLimitKb? }`.
 */

export const SCRIPT_LIMITS = {
  timeoutMs: { default: 50, min: 1, max: 1000 },
  memoryLimitMb: { default: 16, min: 1, max: 64 },
  stackLimitKb: { default: 256, min: 32, max: 1024 },
} as const;

export const MAX_SCRIPT_LENGTH = 64 * 1024;

/** Sandboxes kept alive at once; the least recently used one is released beyond this. */
const MAX_LIVE_SANDBOXES = 32;

function validateScript(config: Record<string, unknown>): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const { code } = config;
  if (typeof code !== 'string' || code.trim() === '') {
    problems.push({
      path: '/code',
      message: 'code is required: function parse(bytes, meta) { return {…}; }',
    });
  } else if (code.length > MAX_SCRIPT_LENGTH) {
    problems.push({ path: '/code', message: `code is longer than ${MAX_SCRIPT_LENGTH} characters` });
  }
  for (const [name, range] of Object.entries(SCRIPT_LIMITS)) {
    const value = config[name];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < range.min || value > range.max) {
      problems.push({
        path: `/${name}`,
        message: `${name} must be an integer from ${range.min} to ${range.max}`,
      });
    }
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
  constructor(
    private readonly code: string,
    private readonly limits: SandboxLimits,
    private sandbox: Sandbox | null,
  ) {
    if (sandbox) this.touch();
  }

  async parse(payload: Buffer, meta: Record<string, unknown> = {}) {
    this.sandbox ??= await Sandbox.create(this.code, this.limits);
    const sandbox = this.sandbox;
    this.touch();
    let text: string;
    try {
      text = sandbox.call(JSON.stringify({ bytes: Array.from(payload), meta }));
    } finally {
      if (sandbox.broken) this.release();
    }
    return toValues(JSON.parse(text), 'The parser script result', 'PARSER_ERROR');
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
  return new ScriptParser(code, limits, await Sandbox.create(code, limits));
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
