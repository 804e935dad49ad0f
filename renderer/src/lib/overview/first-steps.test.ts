import { describe, expect, it } from 'vitest';
import { PageAccess } from '../page-permissions';
import { firstSteps, showFirstSteps } from './first-steps';

const admin = new PageAccess(['all.manage']);
const empty = { connectors: 0, devices: 0, twins: 0 };

describe('first steps on the overview', () => {
  it('lists connector, devices, twin and then dashboards and rules, none done on an empty site', () => {
    const steps = firstSteps(empty, admin);
    expect(steps.map((s) => [s.id, s.done])).toEqual([
      ['connector', false],
      ['devices', false],
      ['twin', false],
      ['use', null],
    ]);
    expect(steps.map((s) => s.links.map((l) => l.href))).toEqual([
      ['#/connectors?new=1'],
      ['#/devices'],
      ['#/twins'],
      ['#/dashboards', '#/rules'],
    ]);
    expect(steps.some((s) => s.notAllowed)).toBe(false);
  });

  it('marks a step done from its count', () => {
    const steps = firstSteps({ connectors: 1, devices: 3, twins: 0 }, admin);
    expect(steps.map((s) => s.done)).toEqual([true, true, false, null]);
  });

  it('shows the panel while devices or twins are missing, and not once both exist', () => {
    expect(showFirstSteps(empty)).toBe(true);
    expect(showFirstSteps({ connectors: 1, devices: 2, twins: 0 })).toBe(true);
    expect(showFirstSteps({ connectors: 0, devices: 0, twins: 4 })).toBe(true);
    expect(showFirstSteps({ connectors: 1, devices: 2, twins: 1 })).toBe(false);
  });

  it('needs the device count; without the twin count it follows the devices alone', () => {
    expect(showFirstSteps({ connectors: 0, devices: null, twins: 0 })).toBe(false);
    expect(showFirstSteps({ connectors: null, devices: 0, twins: null })).toBe(true);
    expect(showFirstSteps({ connectors: null, devices: 1, twins: null })).toBe(false);
  });

  it('links only pages the user may open and act on, and leaves an unknown count unmarked', () => {
    const reader = new PageAccess(['VirtualDevice.read', 'digitalTwin.manage', 'dashboard.manage']);
    const steps = firstSteps({ connectors: null, devices: 0, twins: 0 }, reader);
    expect(steps.map((s) => [s.id, s.done, s.notAllowed, s.links.map((l) => l.id)])).toEqual([
      ['connector', null, true, []],
      ['devices', false, true, []],
      ['twin', false, false, ['twins']],
      ['use', null, false, ['dashboards']],
    ]);
  });

  it('follows the implied permissions of the server (Integration.manage creates connectors)', () => {
    const steps = firstSteps(empty, new PageAccess(['Integration.manage']));
    expect(steps[0]!.links.map((l) => l.id)).toEqual(['connectors']);
  });
});
