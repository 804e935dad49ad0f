import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  RELEASE_SYNC,
  type QuickJSContext,
  type QuickJSHandle,
  type QuickJSRuntime,
  type QuickJSWASMModule,
} from 'quickjs-emscripten';
import { ParseError } from '../parser.types.js';
import { PARSE_ENTRY, prelude, signature, type SandboxEntry } from './sandbox-prelude.js';

export {
  MAX_LOG_LINE_CHARS,
  MAX_LOG_LINES,
  PARSE_ENTRY,
  type SandboxEntry,
  type SandboxFunction,
} from './sandbox-prelude.js';

/**
 * User scripts run in QuickJS compiled to WebAssembly, never in the server's V8 context: the
 * script sees standard ECMAScript built-ins and the input handed to it, nothing of the host
 * (no process, require, timers, network or file system).
 *
 * Limits, each enforced by the engine or the host, never by the script's cooperation:
 * - time: an interrupt handler stops the interpreter after `timeoutMs` (PARSER_TIMEOUT);
 * - memory: every sandbox gets its own WebAssembly instance whose linear memory has a fixed
 *   maximum. QuickJS's own `setMemoryLimit` is kept, but in the Emscripten build it only bounds
 *   single allocations (it counts 8 bytes per block; quickjs-emscripten#271), so the memory
 *   maximum is what really stops a memory bomb (PARSER_MEMORY_LIMIT);
 * - stack: `setMaxStackSize` (a stack overflow is a PARSER_ERROR).
 * A sandbox is reused across calls (a call costs microseconds, a new sandbox milliseconds) and
 * thrown away after any limit was hit, so a broken runtime is never used again.
 */

export interface SandboxLimits {
  timeoutMs: number;
  memoryLimitMb: number;
  stackLimitKb: number;
}

const PAGE = 64 * 1024;
/** The module's own minimum (Emscripten's INITIAL_MEMORY): code, static data, C stack. */
const BASE_PAGES = 256;
/** Interrupt polls a step must have made before its time limit can stop it (see the handler). */
const MIN_POLLS_FOR_TIMEOUT = 3;
/** Longest script result accepted back into the host, in characters of JSON. */
const MAX_RESULT_CHARS = 1024 * 1024;

/** The slice of the WebAssembly JS API used here (the project's `lib` has no DOM types). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(deltaPages: number): number;
}
interface WasmApi {
  Memory: new (descriptor: { initial: number; maximum: number }) => WasmMemory;
  compile(bytes: Uint8Array): Promise<object>;
}
const { WebAssembly: wasm } = globalThis as unknown as { WebAssembly: WasmApi };

const require = createRequire(import.meta.url);
let compiledWasm: Promise<object> | undefined;
/** The WebAssembly code is compiled once; each sandbox only instantiates it (≈ 2 ms). */
const wasmModule = () =>
  (compiledWasm ??= readFile(require.resolve('@jitl/quickjs-wasmfile-release-sync/wasm'))
    .then((bytes) => wasm.compile(bytes))
    .catch((error: unknown) => {
      compiledWasm = undefined;
      throw error;
    }));

export class Sandbox {
  private deadline = Number.POSITIVE_INFINITY;
  /** Interrupt polls since the step started; QuickJS polls about every 10,000 operations. */
  private polls = 0;
  private interrupted = false;
  private growthRefused = false;
  private disposed = false;
  private readonly runtime: QuickJSRuntime;
  private readonly context: QuickJSContext;
  private readonly run: QuickJSHandle;
  private readonly logs: QuickJSHandle;
  /** The functions of the entry and its `others` that the script defines. */
  readonly defined: ReadonlySet<string> = new Set();

  /** Loads the user's code into a new sandbox; throws ParseError when it does not compile or run. */
  static async create(
    code: string,
    limits: SandboxLimits,
    entry: SandboxEntry = PARSE_ENTRY,
  ): Promise<Sandbox> {
    const memory = new wasm.Memory({
      initial: BASE_PAGES,
      maximum: BASE_PAGES + Math.ceil((limits.memoryLimitMb * 1024 * 1024) / PAGE),
    });
    const module = await newQuickJSWASMModuleFromVariant(
      newVariant(RELEASE_SYNC, { wasmModule, wasmMemory: memory }),
    );
    return new Sandbox(module, memory, code, limits, entry);
  }

  private constructor(
    module: QuickJSWASMModule,
    memory: WasmMemory,
    code: string,
    private readonly limits: SandboxLimits,
    private readonly entry: SandboxEntry,
  ) {
    // Emscripten grows the heap through this object: a refused growth is the memory limit.
    const grow = memory.grow.bind(memory);
    memory.grow = (delta: number) => {
      try {
        return grow(delta);
      } catch (error) {
        this.growthRefused = true;
        throw error;
      }
    };
    this.runtime = module.newRuntime();
    this.runtime.setMemoryLimit(limits.memoryLimitMb * 1024 * 1024);
    this.runtime.setMaxStackSize(limits.stackLimitKb * 1024);
    this.runtime.setInterruptHandler(() => {
      // A few polls past the deadline prove the script itself is busy: a pause of the whole
      // process (garbage collection, a loaded machine) during a short script is not its fault.
      this.polls += 1;
      if (this.polls < MIN_POLLS_FOR_TIMEOUT || Date.now() <= this.deadline) return false;
      this.interrupted = true;
      return true;
    });
    this.context = this.runtime.newContext();
    try {
      this.evaluate(prelude(entry), 'prelude.js');
      this.run = this.context.getProp(this.context.global, '__stellwerkRun');
      this.logs = this.context.getProp(this.context.global, '__stellwerkLogs');
      const defined = this.context.getProp(this.context.global, '__stellwerkDefined');
      this.evaluate(
        'delete globalThis.__stellwerkRun; delete globalThis.__stellwerkLogs; delete globalThis.__stellwerkDefined;',
        'prelude.js',
      );
      try {
        this.evaluate(code, `${entry.name}.js`);
        this.defined = new Set(
          JSON.parse(
            this.limited(
              () => this.context.callFunction(defined, this.context.undefined),
              (result) => this.context.getString(result),
            ),
          ) as string[],
        );
      } finally {
        defined.dispose();
      }
      const entries = [entry, ...(entry.others ?? []).filter((f) => f.entry)];
      if (!entries.some((f) => this.defined.has(f.name))) {
        throw new ParseError(
          `The script must define function ${entries.map(signature).join(' or ')}`,
          'PARSER_ERROR',
        );
      }
    } catch (error) {
      this.dispose();
      throw error;
    }
  }

  /**
   * Calls a function the script defines (the entry by default) with JSON in and JSON out; throws
   * ParseError with a PARSER_* code.
   */
  call(input: string, name: string = this.entry.name): string {
    if (this.disposed) throw new Error('sandbox used after dispose');
    const fn = this.context.newString(name);
    const arg = this.context.newString(input);
    try {
      return this.limited(
        () => this.context.callFunction(this.run, this.context.undefined, fn, arg),
        (result) => {
          const text = this.context.getString(result);
          if (text.length > MAX_RESULT_CHARS) {
            throw new ParseError(
              `${name} returned ${text.length} characters of JSON; at most ${MAX_RESULT_CHARS} are allowed`,
              'PARSER_ERROR',
            );
          }
          return text;
        },
      );
    } finally {
      arg.dispose();
      fn.dispose();
    }
  }

  /**
   * The `console.*` lines written since the last take (at most MAX_LOG_LINES). Empty once a limit was
   * hit: the runtime is not entered again.
   */
  takeLogs(): string[] {
    if (this.disposed || this.broken) return [];
    try {
      const text = this.limited(
        () => this.context.callFunction(this.logs, this.context.undefined),
        (result) => this.context.getString(result),
      );
      const lines: unknown = JSON.parse(text);
      return Array.isArray(lines) ? lines.map(String) : [];
    } catch {
      return [];
    }
  }

  /** Whether a limit was hit: the runtime may be half-way through something and is not reused. */
  get broken(): boolean {
    return this.interrupted || this.growthRefused;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    // Handles first: QuickJS frees a runtime only when nothing refers into it any more.
    for (const release of [
      () => this.run?.dispose(),
      () => this.logs?.dispose(),
      () => this.context?.dispose(),
      () => this.runtime?.dispose(),
    ]) {
      try {
        release();
      } catch {
        // A runtime that ran out of memory may refuse to free cleanly; the instance is dropped anyway.
      }
    }
  }

  private evaluate(code: string, filename: string): void {
    this.limited(
      () => this.context.evalCode(code, filename),
      () => undefined,
    );
  }

  /** Runs one step under the time limit and turns a failure into the matching ParseError. */
  private limited<T>(
    step: () => { error?: QuickJSHandle; value?: QuickJSHandle },
    onValue: (value: QuickJSHandle) => T,
  ): T {
    this.deadline = Date.now() + this.limits.timeoutMs;
    this.polls = 0;
    this.interrupted = false;
    this.growthRefused = false;
    let outcome: { error?: QuickJSHandle; value?: QuickJSHandle };
    try {
      outcome = step();
    } finally {
      this.deadline = Number.POSITIVE_INFINITY;
    }
    if (outcome.error) {
      const error = this.describe(outcome.error);
      outcome.error.dispose();
      throw error;
    }
    try {
      return onValue(outcome.value!);
    } finally {
      outcome.value!.dispose();
    }
  }

  private describe(handle: QuickJSHandle): ParseError {
    if (this.interrupted) {
      return new ParseError(
        `The ${this.entry.label} ran longer than its time limit of ${this.limits.timeoutMs} ms and was stopped`,
        'PARSER_TIMEOUT',
      );
    }
    let dumped: unknown;
    try {
      dumped = this.context.dump(handle);
    } catch {
      dumped = undefined;
    }
    const { name, message } =
      typeof dumped === 'object' && dumped !== null
        ? (dumped as { name?: unknown; message?: unknown })
        : { name: undefined, message: undefined };
    const outOfMemory = name === 'InternalError' && message === 'out of memory';
    const userError = typeof message === 'string' && message !== '' && !outOfMemory;
    if (outOfMemory || (this.growthRefused && !userError)) {
      this.growthRefused = true;
      return new ParseError(
        `The ${this.entry.label} needed more than its memory limit of ${this.limits.memoryLimitMb} MB and was stopped`,
        'PARSER_MEMORY_LIMIT',
      );
    }
    if (name === 'InternalError' && message === 'stack overflow') {
      return new ParseError(
        `The ${this.entry.label} overflowed its stack limit of ${this.limits.stackLimitKb} KB (endless recursion?)`,
        'PARSER_ERROR',
      );
    }
    const text = userError
      ? `${typeof name === 'string' && name ? `${name}: ` : ''}${message}`
      : `threw ${JSON.stringify(dumped) ?? String(dumped)}`;
    return new ParseError(`The ${this.entry.label} failed: ${text}`, 'PARSER_ERROR');
  }
}
