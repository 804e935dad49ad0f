import { describe, expect, it } from 'vitest';
import { de } from '../../i18n/de';
import { en } from '../../i18n/en';
import { flowBody, flowDraft, move, problemsOf, rowKey, type Flow } from './flow-form';

describe('flow form', () => {
  const flow: Flow = {
    id: 'f1',
    accountId: 'a1',
    title: 'Hot',
    description: '',
    active: false,
    source: { type: 'alarms', categories: ['Konnektorüberwachung', 'Ops'] },
    steps: [
      { type: 'filter', id: 's1' },
      { type: 'transformer', id: 's2' },
    ],
    targets: [{ connectorId: 'c1', subject: 'Alert' }],
    permissionScopeIds: null,
    createdAt: '2026-01-01T00:00:00Z',
    updatedAt: '2026-01-01T00:00:00Z',
  };

  it('round-trips a stored flow and switches the source kind cleanly', () => {
    const draft = flowDraft(flow);
    expect(draft.categories).toBe('Konnektorüberwachung, Ops');
    expect(flowBody(draft)).toEqual({
      title: 'Hot',
      description: '',
      active: false,
      source: { type: 'alarms', categories: ['Konnektorüberwachung', 'Ops'] },
      steps: [
        { type: 'filter', id: 's1' },
        { type: 'transformer', id: 's2' },
      ],
      targets: [{ connectorId: 'c1', subject: 'Alert' }],
    });
    draft.sourceType = 'packets';
    expect(flowBody(draft).source).toEqual({ type: 'packets', connectorIds: [], deviceIds: [] });
  });

  it('moves steps within bounds and reads problem paths', () => {
    const items = [1, 2, 3];
    expect(move(items, 0, -1)).toBe(false);
    expect(move(items, 2, -1)).toBe(true);
    expect(items).toEqual([1, 3, 2]);
    expect(move(items, 2, 1)).toBe(false);
    expect(rowKey()).not.toBe(rowKey());
    expect(
      problemsOf(
        [
          { path: '/source/connectorIds', message: 'unknown' },
          { path: '/source/connectorIds', message: 'second' },
          { nothing: true },
        ],
        en.schemaProblems,
      ),
    ).toEqual(new Map([['/source/connectorIds', 'unknown']]));
    // A keyword reads in the console's language; the server's message stays for clients without one.
    expect(
      problemsOf(
        [{ path: '/steps', keyword: 'notFound', params: { id: 'f1' }, id: 'f1', message: 'no such filter' }],
        de.schemaProblems,
      ),
    ).toEqual(new Map([['/steps', 'wurde nicht gefunden']]));
  });
});
