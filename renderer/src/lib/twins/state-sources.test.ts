import { describe, expect, it } from 'vitest';
import { sourceOf, stateDraftOf } from '../../components/twins/state-draft';
import { sourceFields, type StateSourceInfo } from './state-sources';

// Shaped like GET /xapi/v1/state-sources: the console's fields follow the server's form and schema.
const AGGREGATE = {
  type: 'aggregate',
  summary: '',
  settable: false,
  settings: {
    properties: {
      type: { const: 'aggregate' },
      operation: { anyOf: [{ const: 'sum' }, { const: 'difference' }] },
      stateIds: { type: 'array' },
    },
  },
  form: [
    { key: 'operation', widget: 'choice' },
    { key: 'stateIds', widget: 'states' },
  ],
} as StateSourceInfo;
const SWITCH = {
  type: 'switch-with-delay',
  summary: '',
  settable: true,
  settings: { properties: { initial: { type: 'boolean' }, delaySeconds: { type: 'integer' } } },
  form: [
    { key: 'initial', widget: 'checkbox' },
    { key: 'delaySeconds', widget: 'number' },
  ],
} as StateSourceInfo;

describe('state source form', () => {
  it('takes the choices of a field from the schema', () => {
    expect(sourceFields(AGGREGATE)).toEqual([
      { key: 'operation', widget: 'choice', choices: ['sum', 'difference'] },
      { key: 'stateIds', widget: 'states', choices: [] },
    ]);
    expect(sourceFields(undefined)).toEqual([]);
  });

  it('sends the fields of the chosen source by widget and reads them back', () => {
    const draft = stateDraftOf(null, new Set(['a']));
    draft.sourceType = 'aggregate';
    draft.source = { operation: 'sum', delaySeconds: '5' };
    draft.stateIds = ['a'];
    draft.otherStateIds = 'b, a';
    expect(sourceOf(draft, sourceFields(AGGREGATE))).toEqual({
      type: 'aggregate',
      operation: 'sum',
      stateIds: ['a', 'b'],
    });

    draft.sourceType = 'switch-with-delay';
    expect(sourceOf(draft, sourceFields(SWITCH))).toEqual({
      type: 'switch-with-delay',
      initial: false,
      delaySeconds: 5,
    });
    draft.source.initial = 'true';
    draft.source.delaySeconds = 'soon';
    expect(sourceOf(draft, sourceFields(SWITCH))).toEqual({
      type: 'switch-with-delay',
      initial: true,
      delaySeconds: 'soon',
    });

    const state = {
      source: { type: 'switch-with-delay', initial: true, delaySeconds: 5 },
    } as unknown as Parameters<typeof stateDraftOf>[0];
    expect(stateDraftOf(state, new Set()).source).toEqual({ initial: 'true', delaySeconds: '5' });
  });
});
