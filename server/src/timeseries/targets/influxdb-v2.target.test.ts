import { describe, expect, it } from 'vitest';
import { fluxReadQuery } from './influxdb-v2.target.js';

describe('InfluxDB 2.x reads', () => {
  it('builds Flux with every value escaped by the client library, never pasted', () => {
    const query = fluxReadQuery('site"; drop', 'states', {
      stateIds: ['a") |> drop(', 'b'],
      from: new Date(0),
      to: new Date(1000),
      limit: 5,
    }).toString();
    expect(query).toContain('from(bucket: "site\\"; drop")');
    expect(query).toContain('range(start: 1970-01-01T00:00:00.000Z, stop: 1970-01-01T00:00:01.000Z)');
    expect(query).toContain('contains(value: r.state_id, set: ["a\\") |> drop(","b"])');
    expect(query).toContain('pivot(rowKey: ["_time"], columnKey: ["_field"], valueColumn: "_value")');
    expect(query.trim().endsWith('|> limit(n: 5)')).toBe(true);
  });
});
