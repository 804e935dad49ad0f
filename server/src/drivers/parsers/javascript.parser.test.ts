import { describe, expect, it } from 'vitest';
import type { CompiledParser } from '../parser.types.js';
import { javascriptParser, liveSandboxCount } from './javascript.parser.js';
import { parseFailure } from './script-parser.test-support.js';

const compile = (code: string, limits: Record<string, number> = {}) =>
  javascriptParser.compile!({ type: 'javascript', code, ...limits });

const run = async (code: string, payload = Buffer.from([1, 2, 3]), limits: Record<string, number> = {}) =>
  javascriptParser.parse(payload, { type: 'javascript', code, ...limits }, { deviceKey: 'dev-1' });

/** A parser that must still answer after its sandbox was thrown away. */
const HEALTHY = 'function parse(bytes) { return { n: bytes.length }; }';

describe('javascript parser (QuickJS sandbox)', () => {
  it('gets the bytes as a plain array of numbers and the packet meta', async () => {
    const values = await run(
      `function parse(bytes, meta) {
         return { isArray: Array.isArray(bytes), sum: bytes.reduce((a, b) => a + b, 0),
                  t: ((bytes[0] << 8) | bytes[1]) / 10, device: meta.deviceKey };
       }`,
      Buffer.from([0x01, 0x02, 0xff]),
    );
    expect(values).toEqual({ isArray: true, sum: 258, t: 25.8, device: 'dev-1' });
  });

  it('returns arrays of objects and refuses more than 50', async () => {
    await expect(run('function parse() { return [{ a: 1 }, { a: 2 }]; }')).resolves.toEqual([
      { a: 1 },
      { a: 2 },
    ]);
    const error = await parseFailure(
      run('function parse() { return Array.from({ length: 51 }, (_, i) => ({ i })); }'),
    );
    expect(error.code).toBe('PARSER_ERROR');
    expect(error.message).toMatch(/51 items; at most 50/);
  });

  it('stops an endless loop with PARSER_TIMEOUT in bounded time', async () => {
    const parser = await compile('function parse() { for (;;) {} }');
    const started = Date.now();
    const error = await parseFailure(parser.parse(Buffer.alloc(1)));
    expect(error.code).toBe('PARSER_TIMEOUT');
    expect(error.message).toMatch(/time limit of 50 ms/);
    expect(Date.now() - started).toBeLessThan(1000);
    parser.dispose?.();
  });

  it('stops an endless loop at the top level of the script as well', async () => {
    const error = await parseFailure(
      compile('while (true) {} function parse() { return {}; }', { timeoutMs: 20 }),
    );
    expect(error.code).toBe('PARSER_TIMEOUT');
  });

  it.each([
    ['growing arrays', 'const keep = []; for (;;) keep.push(new Array(10000).fill(1));'],
    ['many small objects', 'const keep = []; for (;;) keep.push({ i: keep.length });'],
    ['typed arrays', 'const keep = []; for (;;) keep.push(new Uint8Array(512 * 1024));'],
    ['strings', "const keep = []; for (;;) keep.push('x'.repeat(100000) + keep.length);"],
    ['one huge buffer', 'new ArrayBuffer(1024 * 1024 * 1024);'],
  ])('stops a memory bomb (%s) with PARSER_MEMORY_LIMIT', async (_name, bomb) => {
    const parser = await compile(`function parse() { ${bomb} return {}; }`, {
      memoryLimitMb: 8,
      timeoutMs: 1000,
    });
    const started = Date.now();
    const error = await parseFailure(parser.parse(Buffer.alloc(1)));
    expect(error.code, error.message).toBe('PARSER_MEMORY_LIMIT');
    expect(error.message).toMatch(/memory limit of 8 MB/);
    expect(Date.now() - started).toBeLessThan(1000);
    parser.dispose?.();
  });

  it('stops a memory bomb with the default limits too (memory or time, never the host)', async () => {
    const error = await parseFailure(
      run('function parse() { const k = []; for (;;) k.push(new Uint8Array(1 << 20)); }'),
    );
    expect(error.code).toBe('PARSER_MEMORY_LIMIT');
  });

  it('keeps working after a limit was hit: the broken sandbox is replaced', async () => {
    const parser = await compile(
      `function parse(bytes) {
         if (bytes[0] === 1) for (;;) {}
         if (bytes[0] === 2) { const k = []; for (;;) k.push(new Uint8Array(1 << 20)); }
         if (bytes[0] === 3) throw new RangeError('bad frame');
         return { ok: bytes[0] };
       }`,
    );
    expect((await parseFailure(parser.parse(Buffer.from([1])))).code).toBe('PARSER_TIMEOUT');
    await expect(parser.parse(Buffer.from([0]))).resolves.toEqual({ ok: 0 });
    expect((await parseFailure(parser.parse(Buffer.from([2])))).code).toBe('PARSER_MEMORY_LIMIT');
    await expect(parser.parse(Buffer.from([9]))).resolves.toEqual({ ok: 9 });
    const thrown = await parseFailure(parser.parse(Buffer.from([3])));
    expect(thrown).toMatchObject({
      code: 'PARSER_ERROR',
      message: 'The parser script failed: RangeError: bad frame',
    });
    await expect(parser.parse(Buffer.from([4]))).resolves.toEqual({ ok: 4 });
    parser.dispose?.();
  });

  it('reaches nothing of the host', async () => {
    const values = await run(
      `function parse() {
         return { process: typeof process, require: typeof require, module: JSON.stringify(module),
                  fetch: typeof fetch, setTimeout: typeof setTimeout,
                  std: typeof std, os: typeof os, WebAssembly: typeof WebAssembly,
                  prelude: typeof __stellwerkRun, logs: typeof __stellwerkLogs, defined: typeof __stellwerkDefined,
                  viaFunction: typeof Function('return this')().process };
       }`,
    );
    expect(values).toEqual({
      process: 'undefined',
      require: 'undefined',
      // The sandbox's own, for vendor files that export their functions for Node.
      module: '{"exports":{}}',
      fetch: 'undefined',
      setTimeout: 'undefined',
      std: 'undefined',
      os: 'undefined',
      WebAssembly: 'undefined',
      prelude: 'undefined',
      logs: 'undefined',
      defined: 'undefined',
      viaFunction: 'undefined',
    });
  });

  it.each([
    ['a function', 'return function () {};', /parse returned a function; only JSON values/],
    ['a nested function', 'return { f: () => 1 };', /parse returned a function at "f"/],
    ['a cyclic value', 'const o = {}; o.self = o; return o;', /parse returned a cyclic value/],
    ['undefined', 'return undefined;', /parse returned undefined/],
    ['a Promise', 'return Promise.resolve({});', /not a Promise/],
    ['a bigint', 'return { big: 10n };', /a bigint at "big"/],
    ['a number', 'return 42;', /result is a number; expected an object/],
  ])('refuses a result that is %s with a clear PARSER_ERROR', async (_name, body, message) => {
    const error = await parseFailure(run(`function parse() { ${body} }`));
    expect(error.code).toBe('PARSER_ERROR');
    expect(error.message).toMatch(message);
  });

  it('cannot smuggle values out by replacing JSON.stringify', async () => {
    const error = await parseFailure(
      run('JSON.stringify = () => "{}"; function parse() { return { f: () => 1 }; }'),
    );
    expect(error.message).toMatch(/a function at "f"/);
  });

  it('reports user errors, thrown non-errors and endless recursion', async () => {
    expect(
      await parseFailure(run('function parse() { throw new Error("checksum mismatch"); }')),
    ).toMatchObject({
      code: 'PARSER_ERROR',
      message: 'The parser script failed: Error: checksum mismatch',
    });
    expect((await parseFailure(run('function parse() { throw "plain"; }'))).message).toBe(
      'The parser script failed: threw "plain"',
    );
    const overflow = await parseFailure(run('function parse() { return parse(); }'));
    expect(overflow).toMatchObject({ code: 'PARSER_ERROR' });
    expect(overflow.message).toMatch(/stack limit of 256 KB/);
  });

  it('refuses scripts that do not compile or define no parse function', async () => {
    expect((await parseFailure(compile('function parse( {'))).message).toMatch(/SyntaxError/);
    expect((await parseFailure(compile('const x = 1;'))).message).toMatch(/must define function parse/);
  });

  it('validates its settings within the safe maxima', () => {
    expect(javascriptParser.validate({ type: 'javascript', code: HEALTHY })).toEqual([]);
    expect(
      javascriptParser.validate({
        type: 'javascript',
        code: '',
        timeoutMs: 5000,
        memoryLimitMb: 0,
        stackLimitKb: 1.5,
      }),
    ).toMatchObject([
      { path: '/code', keyword: 'required', message: expect.stringMatching(/code is required/) as string },
      {
        path: '/timeoutMs',
        keyword: 'maximum',
        params: { limit: 1000 },
        message: 'timeoutMs must be an integer from 1 to 1000',
      },
      {
        path: '/memoryLimitMb',
        keyword: 'minimum',
        params: { limit: 1 },
        message: 'memoryLimitMb must be an integer from 1 to 64',
      },
      {
        path: '/stackLimitKb',
        keyword: 'type',
        params: { type: 'integer' },
        message: 'stackLimitKb must be an integer from 32 to 1024',
      },
    ]);
    expect(javascriptParser.validate({ type: 'javascript', code: 'x'.repeat(1024 * 1024 + 1) })).toHaveLength(
      1,
    );
  });

  it('keeps a bounded number of sandboxes alive and rebuilds released ones on use', async () => {
    const parsers: CompiledParser[] = [];
    for (let i = 0; i < 40; i++) parsers.push(await compile(`function parse() { return { i: ${i} }; }`));
    expect(liveSandboxCount()).toBeLessThanOrEqual(32);
    await expect(parsers[0]!.parse(Buffer.alloc(0))).resolves.toEqual({ i: 0 });
    expect(liveSandboxCount()).toBeLessThanOrEqual(32);
    for (const parser of parsers) parser.dispose?.();
  });

  it('reuses one sandbox across calls: a call costs microseconds, not a new sandbox', async () => {
    const parser = await compile(HEALTHY);
    const started = performance.now();
    for (let i = 0; i < 1000; i++) await parser.parse(Buffer.from([i & 0xff]));
    expect(performance.now() - started).toBeLessThan(1000);
    parser.dispose?.();
  });
});
