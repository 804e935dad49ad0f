import { describe, expect, it } from 'vitest';
import { faultyAllowanceMs, nodeStatus } from './health.service.js';

describe('nodeStatus', () => {
  const running = { stopped_at: null };

  it('calls a node faulty once silent past the threshold plus a bounded allowance', () => {
    expect(faultyAllowanceMs(10_000)).toBe(2_000);
    expect(nodeStatus(running, 0, 10_000)).toBe('ok');
    expect(nodeStatus(running, 12_000, 10_000)).toBe('ok');
    expect(nodeStatus(running, 12_001, 10_000)).toBe('faulty');
  });

  it('scales the allowance down for short thresholds', () => {
    expect(faultyAllowanceMs(1_000)).toBe(200);
    expect(nodeStatus(running, 1_201, 1_000)).toBe('faulty');
  });

  it('reports a node that wrote stopped_at as stopped, however long ago', () => {
    expect(nodeStatus({ stopped_at: '1795300000000' }, 90_000_000, 10_000)).toBe('stopped');
  });
});
