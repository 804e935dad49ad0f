import { describe, expect, it } from 'vitest';
import { de } from '../../i18n/de';
import { en } from '../../i18n/en';
import { problemAt, problemsByPath } from '../form-problems';
import { areaPolygons, areaProblem, SAMPLE_CIRCLE } from './rule-area';
import { bodyOf, draftOf, emptyCommand, operatorsFor, type Rule } from './rule-form';

const messages = { json: 'Not valid JSON' };

describe('rule form', () => {
  it('builds an event rule body with typed condition values and an alarm command', () => {
    const draft = draftOf();
    draft.title = '  Too hot ';
    draft.twinId = 'b5f0c7b2-0000-4000-8000-000000000001';
    draft.conditions = [
      // A number input binds a number, not text.
      { stateKey: 'temperature', operator: '>', value: 30 as unknown as string, value2: '' },
      { stateKey: 'mode', operator: '==', value: 'auto', value2: '' },
      { stateKey: 'pressure', operator: 'between', value: '1', value2: '2.5' },
      { stateKey: 'door', operator: 'isTrue', value: 'ignored', value2: '' },
    ];
    draft.commands = [{ ...emptyCommand('alarm'), message: 'Hot: {{states.temperature}}' }];
    const types = new Map([
      ['temperature', 'number'],
      ['mode', 'string'],
    ]);
    const { body, problems } = bodyOf(draft, types, messages);
    expect(problems.size).toBe(0);
    expect(body).toEqual({
      title: 'Too hot',
      description: '',
      active: true,
      twinId: draft.twinId,
      trigger: {
        type: 'event',
        conditions: [
          { stateKey: 'temperature', operator: '>', value: 30 },
          { stateKey: 'mode', operator: '==', value: 'auto' },
          { stateKey: 'pressure', operator: 'between', value: [1, 2.5] },
          { stateKey: 'door', operator: 'isTrue' },
        ],
        match: 'all',
        onChangeOnly: true,
      },
      commands: [{ type: 'alarm', message: 'Hot: {{states.temperature}}' }],
    });
  });

  it('sends an empty range bound as null, not as 0', () => {
    const draft = draftOf();
    draft.title = 'Range';
    // Chromium empties a number input holding 1e999; Svelte binds that as null.
    draft.conditions = [
      {
        stateKey: 'p',
        operator: 'between',
        value: -5 as unknown as string,
        value2: null as unknown as string,
      },
    ];
    const { body } = bodyOf(draft, new Map(), messages);
    expect((body?.trigger as { conditions: unknown[] }).conditions).toEqual([
      { stateKey: 'p', operator: 'between', value: [-5, null] },
    ]);
  });

  it('leaves an emptied interval out of the schedule instead of sending 0', () => {
    const draft = draftOf();
    draft.title = 'Every so often';
    draft.triggerType = 'time';
    draft.scheduleKind = 'interval';
    const scheduleOf = (interval: unknown) => {
      draft.intervalSeconds = interval as string;
      return (bodyOf(draft, new Map(), messages).body?.trigger as { schedule: unknown }).schedule;
    };
    // Svelte binds an emptied number input as null; a text draft may be '' or blanks.
    expect(scheduleOf(null)).toEqual({});
    expect(scheduleOf('')).toEqual({});
    expect(scheduleOf('  ')).toEqual({});
    expect(scheduleOf(600)).toEqual({ intervalSeconds: 600 });
    expect(scheduleOf('90')).toEqual({ intervalSeconds: 90 });
    expect(scheduleOf(0)).toEqual({ intervalSeconds: 0 });
  });

  it('shows the server’s refusal of the empty schedule at the interval field, in the console’s language', () => {
    // What the server answers for `schedule: {}` (server/src/platform/schedule.ts, scheduleDetail).
    const refusal = [
      {
        path: '/trigger/schedule',
        keyword: 'minProperties',
        params: { limit: 1 },
        message: 'give exactly one of at, cron, intervalSeconds',
      },
    ];
    expect(problemAt(problemsByPath(refusal, 'Invalid body', en.schemaProblems), '/trigger/schedule')).toBe(
      'must not be empty',
    );
    expect(problemAt(problemsByPath(refusal, 'Invalid body', de.schemaProblems), '/trigger/schedule')).toBe(
      'darf nicht leer sein',
    );
  });

  it('reads a stored rule back into the same draft (round trip)', () => {
    const draft = draftOf();
    draft.title = 'Geofence';
    draft.triggerType = 'location';
    draft.area = SAMPLE_CIRCLE;
    draft.on = 'enter';
    draft.commands = [
      {
        ...emptyCommand('webhook'),
        connectorId: 'c1',
        body: '{"twin":"{{twin.id}}"}',
        headers: '{"x-a":"1"}',
      },
      { ...emptyCommand('email'), connectorId: 'c2', subject: 'S', body: 'B', to: 'a@x.test, b@x.test' },
    ];
    const { body } = bodyOf(draft, new Map(), messages);
    const stored = { ...body!, id: 'r', accountId: 'a', twinId: null } as unknown as Rule;
    const again = draftOf(stored);
    expect(again.triggerType).toBe('location');
    expect(again.on).toBe('enter');
    expect(JSON.parse(again.area)).toEqual(JSON.parse(SAMPLE_CIRCLE));
    expect(again.commands[0]!.headers).toContain('"x-a": "1"');
    expect(again.commands[1]!.to).toBe('a@x.test, b@x.test');
    expect(bodyOf(again, new Map(), messages).body).toEqual(body);
  });

  it('writes an alarm command’s severity and clear condition, and reads them back', () => {
    const draft = draftOf();
    draft.title = 'Pressure';
    draft.commands = [
      {
        ...emptyCommand('alarm'),
        message: 'High',
        severity: 'major',
        clearKey: 'pressure',
        clearOperator: '<',
        clearValue: '4.5',
      },
    ];
    const { body } = bodyOf(draft, new Map(), messages);
    expect(body!.commands[0]).toEqual({
      type: 'alarm',
      message: 'High',
      severity: 'major',
      clear: { conditions: [{ stateKey: 'pressure', operator: '<', value: 4.5 }] },
    });
    const again = draftOf({ ...body!, id: 'r', accountId: 'a', twinId: null } as unknown as Rule);
    expect(again.commands[0]).toMatchObject({
      severity: 'major',
      clearKey: 'pressure',
      clearOperator: '<',
      clearValue: '4.5',
    });
    // More conditions set through the API survive an edit of the first one in the console.
    const wider = draftOf({
      ...body!,
      id: 'r',
      accountId: 'a',
      twinId: null,
      commands: [
        {
          type: 'alarm',
          message: 'H',
          clear: {
            conditions: [
              { stateKey: 'p', operator: '<', value: 1 },
              { stateKey: 'q', operator: 'exists' },
            ],
            match: 'any',
          },
        },
      ],
    } as unknown as Rule);
    wider.commands[0]!.clearValue = '2';
    expect(bodyOf(wider, new Map(), messages).body!.commands[0]).toEqual({
      type: 'alarm',
      message: 'H',
      clear: {
        conditions: [
          { stateKey: 'p', operator: '<', value: 2 },
          { stateKey: 'q', operator: 'exists' },
        ],
        match: 'any',
      },
    });
    // Without a state key there is no clear condition, and no severity means the server's default.
    const plain = bodyOf(
      { ...draft, commands: [{ ...emptyCommand('alarm'), message: 'M' }] },
      new Map(),
      messages,
    );
    expect(plain.body!.commands[0]).toEqual({ type: 'alarm', message: 'M' });
  });

  it('finds broken JSON and non-areas under the server’s paths', () => {
    const draft = draftOf();
    draft.triggerType = 'location';
    draft.area = '{"type":"Polygon","coordinates":[[[0,0],[1,0],[0,0]]]}';
    draft.commands = [{ ...emptyCommand('webhook'), headers: '{broken' }];
    const { body, problems } = bodyOf(draft, new Map(), messages);
    expect(body).toBeUndefined();
    expect(problems.get('/trigger/area')).toMatch(/at least 4/);
    expect(problems.get('/commands/0')).toMatch(/^Not valid JSON/);
    expect(areaProblem({ type: 'Point', coordinates: [0, 0] })).toMatch(/Polygon/);
    expect(areaProblem(JSON.parse(SAMPLE_CIRCLE))).toBeUndefined();
  });

  it('turns a circle into a closed polygon around its centre for the preview', () => {
    const [polygon] = areaPolygons(JSON.parse(SAMPLE_CIRCLE));
    const ring = polygon![0]!;
    expect(ring).toHaveLength(65);
    expect(ring[0]).toEqual(ring[64]);
    const lats = ring.map((p) => p[1]!);
    // 500 m is about 0.0045° of latitude.
    expect(Math.max(...lats) - 52.52).toBeCloseTo(0.0045, 3);
  });

  it('offers the operators per state type and maps error details to fields', () => {
    expect(operatorsFor('integer')).toContain('between');
    expect(operatorsFor('boolean')).not.toContain('>');
    expect(operatorsFor(undefined)).toContain('hasKey');
    const problems = problemsByPath(
      [{ path: '/trigger/conditions/1' }, { path: '/title', message: 'too long' }],
      'bad',
      en.schemaProblems,
    );
    expect(problemAt(problems, '/trigger/conditions/1')).toBe('bad');
    expect(problemAt(problems, '/trigger')).toBe('bad');
    expect(problemAt(problems, '/title')).toBe('too long');
    expect(problemAt(problems, '/commands')).toBeUndefined();
  });
});
