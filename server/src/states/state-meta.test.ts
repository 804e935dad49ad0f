import { describe, expect, it } from 'vitest';
import { VISUAL_TYPES } from './data-state.entity.js';
import { canonicalVisualType, normaliseMeta } from './state-meta.js';

describe('state meta', () => {
  it('stores common spellings of the visual type canonical, and keeps canonical ones', () => {
    for (const type of VISUAL_TYPES) expect(canonicalVisualType(type)).toBe(type);
    expect(canonicalVisualType('lineChart')).toBe('line-chart');
    expect(canonicalVisualType('line_chart')).toBe('line-chart');
    expect(canonicalVisualType('Line Chart')).toBe('line-chart');
    expect(canonicalVisualType('rawValues')).toBe('raw-values');
    expect(canonicalVisualType('TWIN_BUTTON')).toBe('twin-button');
    expect(canonicalVisualType('pie')).toBeUndefined();
  });

  it('keeps a y-axis bound of 0 and other console settings, refuses min above max', () => {
    const meta = normaliseMeta({
      visual: { type: 'lineChart', yAxis: { min: 0, max: 0, unit: 'm³/h' }, color: 'x' },
      x: 1,
    });
    expect(meta).toEqual({
      visual: { type: 'line-chart', yAxis: { min: 0, max: 0, unit: 'm³/h' }, color: 'x' },
      x: 1,
    });
    expect(normaliseMeta(meta)).toEqual(meta);
    expect(normaliseMeta({ visual: { type: null } })).toEqual({ visual: {} });
    expect(normaliseMeta({ visual: null, y: 2 })).toEqual({ y: 2 });
    expect(() => normaliseMeta({ visual: { yAxis: { min: 1, max: 0 } } })).toThrow(/yAxis.min/);
    expect(() => normaliseMeta({ visual: { type: 'pie' } })).toThrow(/meta.visual.type/);
  });
});
