import { describe, expect, it } from 'vitest';
import type { CommandValidation } from './command.js';
import { alarmClearOf, alarmCommand } from './alarm.command.js';

const v = {} as CommandValidation;

describe('alarm command', () => {
  it('takes a severity of the five and a clear condition in the event-trigger vocabulary', async () => {
    expect(
      await alarmCommand.validate({ type: 'alarm', message: 'm', severity: 'major' }, v),
    ).toBeUndefined();
    expect(await alarmCommand.validate({ type: 'alarm', message: 'm', severity: 'fatal' }, v)).toMatch(
      /severity must be one of info, warning, minor, major, critical/,
    );
    const clear = { conditions: [{ stateKey: 'pressure', operator: '<', value: 4.5 }] };
    expect(await alarmCommand.validate({ type: 'alarm', message: 'm', clear }, v)).toBeUndefined();
    for (const bad of [
      {},
      { conditions: [] },
      { conditions: [{ stateKey: 'pressure', operator: '<', value: 'low' }] },
      { conditions: [{ operator: 'exists' }] },
      { ...clear, match: 'some' },
    ])
      expect(
        await alarmCommand.validate({ type: 'alarm', message: 'm', clear: bad }, v),
        JSON.stringify(bad),
      ).toMatch(/clear/);
  });

  it('finds the clear condition of a rule’s commands, and none when the alarm command has none', () => {
    const clear = { conditions: [{ stateKey: 'level', operator: '<=', value: 2 }], match: 'any' };
    expect(alarmClearOf([{ type: 'email' }, { type: 'alarm', message: 'm', clear }])).toEqual(clear);
    expect(alarmClearOf([{ type: 'alarm', message: 'm' }])).toBeNull();
    expect(alarmClearOf([{ type: 'alarm', message: 'm', clear: { conditions: [] } }])).toBeNull();
  });
});
