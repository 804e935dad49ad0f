import { describe, expect, it } from 'vitest';
import { metaInfoOf, metaRowsOf } from './meta-info';

describe('meta info editor', () => {
  it('round-trips text values and keeps structured ones as they are', () => {
    const stored = { site: 'Nord', limits: { max: 3 }, count: 4 };
    const rows = metaRowsOf(stored);
    expect(rows.map((r) => r.value)).toEqual(['Nord', '{"max":3}', '4']);
    expect(metaInfoOf(rows)).toEqual({ metaInfo: stored });
  });

  it('trims keys, drops lines without a key and refuses a key used twice', () => {
    expect(
      metaInfoOf([
        { key: ' operator ', value: 'Team A' },
        { key: '  ', value: 'lost' },
      ]),
    ).toEqual({ metaInfo: { operator: 'Team A' } });
    expect(
      metaInfoOf([
        { key: 'site', value: 'a' },
        { key: 'site ', value: 'b' },
      ]),
    ).toEqual({ duplicate: 'site' });
  });
});
