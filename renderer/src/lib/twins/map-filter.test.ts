import { describe, expect, it } from 'vitest';
import { isFiltered, located, NO_FILTER, tagChoices, toggled } from './map-filter';
import type { TwinListReply } from './twin-api';

type Listed = TwinListReply['data'][number];
const twin = (title: string, tags: string[], latitude: number | null, longitude: number | null) =>
  ({ id: title, title, tags, latitude, longitude }) as unknown as Listed;

describe('map filter', () => {
  it('toggles a tag or status in and out, keeping the order of choice', () => {
    expect(toggled(['pump'], 'valve')).toEqual(['pump', 'valve']);
    expect(toggled(['pump', 'valve'], 'pump')).toEqual(['valve']);
    expect(toggled([], 'inactive')).toEqual(['inactive']);
    expect(isFiltered(NO_FILTER)).toBe(false);
    expect(isFiltered({ tags: [], statuses: ['inactive'] })).toBe(true);
    expect(isFiltered({ tags: ['pump'], statuses: [] })).toBe(true);
  });

  it('offers every tag once, sorted, and keeps a chosen tag that no twin carries any more', () => {
    const twins = [twin('a', ['valve', 'pump'], 1, 2), twin('b', ['pump'], null, null)];
    expect(tagChoices(twins)).toEqual(['pump', 'valve']);
    expect(tagChoices([], ['pump'])).toEqual(['pump']);
  });

  it('puts only twins with both coordinates on the map', () => {
    const twins = [
      twin('a', [], 47.3, 8.5),
      twin('b', [], null, null),
      twin('c', [], 0, 0),
      twin('d', [], 1, null),
    ];
    expect(located(twins).map((t) => t.title)).toEqual(['a', 'c']);
  });
});
