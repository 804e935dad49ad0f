import type { FilterInputType, FlowSource, FlowTarget } from './flow.entities.js';
import { ScriptError, type FlowScripts, type ScriptRef } from './flow-scripts.js';

/**
 * One item through a flow's steps, in order. A filter must return a boolean: false stops the item
 * (`filtered`). A filter whose input does not fit its input type stops the item too and is reported
 * as DS_FILTER_INVALID_INPUT at WARN level: a mismatched item is the sender's business, not a
 * server fault (spec, Errors: logged below ERROR). A transformer's result replaces the item. A script
 * that throws, runs too long or returns something unusable fails the run (`failed`).
 */

export interface LoadedFilter extends ScriptRef {
  title: string;
  inputType: FilterInputType;
}

export type LoadedStep =
  | { type: 'filter'; filter: LoadedFilter }
  | { type: 'transformer'; transformer: ScriptRef & { title: string } };

export interface LoadedFlow {
  id: string;
  accountId: string;
  title: string;
  source: FlowSource;
  steps: LoadedStep[];
  targets: FlowTarget[];
  /** The scopes the flow takes items of (null: unrestricted). */
  permissionScopeIds: string[] | null;
}

export interface StepsResult {
  outcome: 'passed' | 'filtered' | 'failed';
  output: unknown;
  error: {
    code: string;
    message: string;
    level: 'warn' | 'error';
    step?: { type: string; id: string };
  } | null;
}

/** Whether a value is what a filter of this input type expects. */
export function fitsInputType(type: FilterInputType, value: unknown): boolean {
  const object =
    value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  switch (type) {
    case 'Generic':
      return value !== undefined;
    case 'Packet':
      return (
        !!object &&
        typeof object.deviceId === 'string' &&
        object.states !== null &&
        typeof object.states === 'object'
      );
    case 'AlarmEntry':
      return (
        !!object &&
        typeof object.id === 'string' &&
        typeof object.category === 'string' &&
        typeof object.status === 'string'
      );
  }
}

/** Where DS_FILTER_INVALID_INPUT goes: the server log at WARN (the runner rate-limits it). */
export type InvalidInputReporter = (details: {
  flowId: string;
  filterId: string;
  inputType: FilterInputType;
}) => void;

export async function executeSteps(
  flow: LoadedFlow,
  input: unknown,
  meta: Record<string, unknown>,
  scripts: FlowScripts,
  reportInvalidInput: InvalidInputReporter,
): Promise<StepsResult> {
  let value = input;
  for (const step of flow.steps) {
    const ref = step.type === 'filter' ? step.filter : step.transformer;
    const where = { type: step.type, id: ref.id };
    if (step.type === 'filter' && !fitsInputType(step.filter.inputType, value)) {
      reportInvalidInput({ flowId: flow.id, filterId: step.filter.id, inputType: step.filter.inputType });
      return {
        outcome: 'filtered',
        output: null,
        error: {
          code: 'DS_FILTER_INVALID_INPUT',
          message: `The input is not of the filter's input type ${step.filter.inputType}`,
          level: 'warn',
          step: where,
        },
      };
    }
    let result: unknown;
    try {
      result = await scripts.run(step.type, ref, value, meta);
    } catch (error) {
      const e = error instanceof ScriptError ? error : new ScriptError('SCRIPT_ERROR', String(error));
      return {
        outcome: 'failed',
        output: null,
        error: { code: e.code, message: e.message, level: 'error', step: where },
      };
    }
    if (step.type === 'filter') {
      if (typeof result !== 'boolean') {
        return {
          outcome: 'failed',
          output: null,
          error: {
            code: 'FILTER_RESULT_INVALID',
            message: `The filter returned ${JSON.stringify(result)?.slice(0, 100)}, not true or false`,
            level: 'error',
            step: where,
          },
        };
      }
      if (!result) return { outcome: 'filtered', output: null, error: null };
    } else {
      value = result;
    }
  }
  return { outcome: 'passed', output: value, error: null };
}
