import { afterAll, describe, expect, it } from 'vitest';
import { executeSteps, fitsInputType, type LoadedFlow } from './flow-execution.js';
import { FlowScripts } from './flow-scripts.js';

const scripts = new FlowScripts();
afterAll(() => scripts.dispose());

const at = new Date('2026-11-23T00:00:00Z');
const flow = (steps: LoadedFlow['steps']): LoadedFlow => ({
  id: 'f1',
  accountId: 'a1',
  title: 'F',
  source: { type: 'packets' },
  permissionScopeIds: null,
  steps,
  targets: [],
});
let ids = 0;
const filter = (code: string, inputType: 'Generic' | 'Packet' | 'AlarmEntry' = 'Generic') => ({
  type: 'filter' as const,
  filter: { id: `flt-${++ids}-${inputType}`, title: 'f', inputType, code, updatedAt: at },
});
const transformer = (code: string) => ({
  type: 'transformer' as const,
  transformer: { id: `tr-${++ids}`, title: 't', code, updatedAt: at },
});
const packet = { deviceId: 'd1', states: { temperature: 25 } };

describe('flow steps', () => {
  it('knows the input types', () => {
    expect(fitsInputType('Generic', 0)).toBe(true);
    expect(fitsInputType('Packet', packet)).toBe(true);
    expect(fitsInputType('Packet', { deviceId: 'd1' })).toBe(false);
    expect(fitsInputType('AlarmEntry', { id: 'x', category: 'c', status: 'open' })).toBe(true);
    expect(fitsInputType('AlarmEntry', packet)).toBe(false);
  });

  it('runs filters and transformers in order', async () => {
    const reported: unknown[] = [];
    const result = await executeSteps(
      flow([
        filter('function filter(i) { return i.states.temperature > 20; }', 'Packet'),
        transformer('function transform(i, meta) { return { t: i.states.temperature, flow: meta.flowId }; }'),
        filter('function filter(i) { return i.t === 25; }'),
      ]),
      packet,
      { flowId: 'f1' },
      scripts,
      (d) => reported.push(d),
    );
    expect(result).toEqual({ outcome: 'passed', output: { t: 25, flow: 'f1' }, error: null });
    expect(reported).toEqual([]);
  });

  it('stops on false, reports a mismatched input as DS_FILTER_INVALID_INPUT at warn level, fails on script errors', async () => {
    const reported: unknown[] = [];
    const report = (d: unknown) => reported.push(d);
    expect(
      await executeSteps(flow([filter('function filter() { return false; }')]), packet, {}, scripts, report),
    ).toEqual({
      outcome: 'filtered',
      output: null,
      error: null,
    });
    const mismatch = await executeSteps(
      flow([filter('function filter() { return true; }', 'AlarmEntry')]),
      packet,
      {},
      scripts,
      report,
    );
    expect(mismatch).toMatchObject({
      outcome: 'filtered',
      error: { code: 'DS_FILTER_INVALID_INPUT', level: 'warn' },
    });
    expect(reported).toEqual([
      {
        flowId: 'f1',
        filterId: expect.stringMatching(/^flt-\d+-AlarmEntry$/) as string,
        inputType: 'AlarmEntry',
      },
    ]);
    expect(
      await executeSteps(flow([filter('function filter() { return "yes"; }')]), packet, {}, scripts, report),
    ).toMatchObject({
      outcome: 'failed',
      error: { code: 'FILTER_RESULT_INVALID', level: 'error' },
    });
    expect(
      await executeSteps(
        flow([transformer('function transform() { throw new Error("nope"); }')]),
        packet,
        {},
        scripts,
        report,
      ),
    ).toMatchObject({
      outcome: 'failed',
      error: {
        code: 'SCRIPT_ERROR',
        message: expect.stringContaining('nope') as string,
        step: { type: 'transformer' },
      },
    });
  });
});
