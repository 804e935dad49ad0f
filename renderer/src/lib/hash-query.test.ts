import { describe, expect, it } from 'vitest';
import { hashLink } from './hash-query';

describe('hashLink', () => {
  it('adds the filled parameters, encoded, and leaves out empty ones', () => {
    expect(hashLink('/devices')).toBe('#/devices');
    expect(hashLink('/devices', { healthState: 'Not ok & warm' })).toBe(
      '#/devices?healthState=Not+ok+%26+warm',
    );
    expect(hashLink('/alarms', { status: 'open', severity: undefined, category: '' })).toBe(
      '#/alarms?status=open',
    );
  });
});
