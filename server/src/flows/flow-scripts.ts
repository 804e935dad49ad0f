import { ParseError } from '../drivers/parser.types.js';
import { Sandbox, type SandboxEntry, type SandboxLimits } from '../drivers/parsers/sandbox.js';
import { AppError, errors } from '../platform/errors.js';
import { problem } from '../platform/http/problem-detail.js';
import type { ErrorCode } from '../platform/error-codes.js';

/**
 * Filters and transformers run in the QuickJS sandbox of the device-driver parsers
 * (drivers/parsers/sandbox.ts): no host access, time, memory and stack limits enforced by the
 * engine. A compiled sandbox is kept per script version (LRU) and thrown away after a limit hit.
 */

export type ScriptKind = 'filter' | 'transformer';

const ENTRIES: Record<ScriptKind, SandboxEntry> = {
  filter: { name: 'filter', params: ['input', 'meta'], label: 'filter script' },
  transformer: { name: 'transform', params: ['input', 'meta'], label: 'transformer script' },
};

export const SCRIPT_TEMPLATES: Record<ScriptKind, string> = {
  filter: 'function filter(input, meta) {\n  return true;\n}\n',
  transformer: 'function transform(input, meta) {\n  return input;\n}\n',
};

export const FLOW_SCRIPT_LIMITS: SandboxLimits = { timeoutMs: 100, memoryLimitMb: 16, stackLimitKb: 256 };
export const MAX_FLOW_SCRIPT_LENGTH = 64 * 1024;
const MAX_LIVE = 64;

/** A script failure: `code` SCRIPT_ERROR, SCRIPT_TIMEOUT or SCRIPT_MEMORY_LIMIT. */
export class ScriptError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ScriptError';
  }
}

const CODES: Partial<Record<string, ErrorCode>> = {
  PARSER_TIMEOUT: 'SCRIPT_TIMEOUT',
  PARSER_MEMORY_LIMIT: 'SCRIPT_MEMORY_LIMIT',
};

function scriptError(error: unknown): ScriptError {
  if (error instanceof ParseError) return new ScriptError(CODES[error.code] ?? 'SCRIPT_ERROR', error.message);
  return new ScriptError('SCRIPT_ERROR', error instanceof Error ? error.message : String(error));
}

export interface ScriptRef {
  id: string;
  code: string;
  updatedAt: Date;
}

export class FlowScripts {
  /** Live sandboxes by `kind:id:version`, least recently used first (a Map keeps insertion order). */
  private readonly live = new Map<string, Sandbox>();

  /** Compiles `code` once to check it; throws 400 VALIDATION_ERROR naming the problem. */
  async check(kind: ScriptKind, code: string): Promise<void> {
    if (code.length > MAX_FLOW_SCRIPT_LENGTH) {
      throw errors.validation(`code is longer than ${MAX_FLOW_SCRIPT_LENGTH} characters`, [
        problem('/code', 'maxLength', { limit: MAX_FLOW_SCRIPT_LENGTH }),
      ]);
    }
    try {
      (await Sandbox.create(code, FLOW_SCRIPT_LIMITS, ENTRIES[kind])).dispose();
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw errors.validation(`The ${kind} script does not load: ${scriptError(error).message}`, [
        { path: '/code' },
      ]);
    }
  }

  /** Runs the script on `input`; returns its JSON result or throws ScriptError. */
  async run(
    kind: ScriptKind,
    script: ScriptRef,
    input: unknown,
    meta: Record<string, unknown>,
  ): Promise<unknown> {
    const key = `${kind}:${script.id}:${script.updatedAt.getTime()}`;
    let sandbox = this.live.get(key);
    try {
      sandbox ??= await Sandbox.create(script.code, FLOW_SCRIPT_LIMITS, ENTRIES[kind]);
    } catch (error) {
      throw scriptError(error);
    }
    this.live.delete(key);
    this.live.set(key, sandbox);
    while (this.live.size > MAX_LIVE) {
      const [oldest, box] = this.live.entries().next().value!;
      this.live.delete(oldest);
      box.dispose();
    }
    try {
      return JSON.parse(
        sandbox.call(JSON.stringify({ input: input === undefined ? null : input, meta })),
      ) as unknown;
    } catch (error) {
      throw scriptError(error);
    } finally {
      if (sandbox.broken) {
        this.live.delete(key);
        sandbox.dispose();
      }
    }
  }

  dispose(): void {
    for (const sandbox of this.live.values()) sandbox.dispose();
    this.live.clear();
  }
}
