import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config.js';
import { parseTimeSeriesTargets } from './timeseries-targets.config.js';

const parse = (raw: string) => parseTimeSeriesTargets(raw, 'STELLWERK_TIMESERIES_TARGETS');

describe('STELLWERK_TIMESERIES_TARGETS', () => {
  it('defaults to the postgres target', () => {
    expect(loadConfig({}).timeseriesTargets).toEqual([
      { name: 'postgres', kind: 'postgres', measurement: 'states' },
    ]);
  });

  it('parses every kind, in order, with credentials and options', () => {
    expect(
      parse(
        'influxdb-v1+http://u:p%40ss@influx:8086/site?measurement=points, postgres,' +
          'influxdb-v2+https://cloud:8086/?org=acme&bucket=stw&token=t0k&name=cloud, victoria-metrics+http://vm:8428',
      ),
    ).toEqual([
      {
        name: 'influxdb-v1',
        kind: 'influxdb-v1',
        url: 'http://influx:8086',
        database: 'site',
        measurement: 'points',
        username: 'u',
        password: 'p@ss',
      },
      { name: 'postgres', kind: 'postgres', measurement: 'states' },
      {
        name: 'cloud',
        kind: 'influxdb-v2',
        flavor: 'influxdb',
        url: 'https://cloud:8086',
        measurement: 'states',
        org: 'acme',
        bucket: 'stw',
        token: 't0k',
      },
      {
        name: 'victoria-metrics',
        kind: 'influxdb-v2',
        flavor: 'victoria-metrics',
        url: 'http://vm:8428',
        measurement: 'states',
      },
    ]);
  });

  it.each([
    ['', /must list at least one target/],
    ['mysql', /unknown target "mysql"/],
    ['influxdb-v1+ftp://x', /unknown target/],
    ['influxdb-v2+http://x:8086?org=a&bucket=b', /needs org=, bucket= and token=/],
    ['postgres,postgres', /two targets named "postgres"/],
    ['influxdb-v1+http://a:1/db,influxdb-v1+http://b:1/db', /give each its own name=/],
    ['influxdb-v1+http://a:1/bad;name', /database "bad;name"/],
    ['influxdb-v1+http://a:1/db?measurement=a b', /measurement "a b"/],
    ['influxdb-v1+http://a:1/db?retention=1', /unknown option "retention"/],
    ['victoria-metrics+http://a:1?name=no/slash', /target name "no\/slash"/],
  ])('refuses %j with a clear message', (raw, message) => {
    expect(() => parse(raw)).toThrow(message);
    expect(() => parse(raw)).toThrow(/^Invalid configuration: STELLWERK_TIMESERIES_TARGETS /);
  });

  it('does not echo passwords or tokens in errors', () => {
    expect(() => parse('influxdb-v9+http://u:secret@h:1/db')).toThrow(/\*\*\*@/);
    expect(() => parse('influxdb-v2+http://h:1/?token=secret&org=a&x=1')).not.toThrow(/secret/);
  });
});
