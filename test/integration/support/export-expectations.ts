import { wallClock, type ExportWorld } from './export-world.js';

/** Plans covering every option, and the rows they must write (computed here from the seed alone). */

/** A plan's format with every default, and its shape with no extras: the plans below spread them. */
export const STANDARD = {
  delimiter: ',',
  decimalSeparator: '.',
  bom: false,
  headerNames: {},
  escapeFormulas: true,
  gzip: false,
};
export const PLAIN_SHAPE = {
  layout: 'points',
  average: null,
  address: false,
  geolocation: false,
  customProperties: [],
};

export const EXCEL_PLAN = {
  title: 'Excel Berlin',
  selection: {
    operator: 'and',
    conditions: [
      { field: 'tag', value: 'pump' },
      { field: 'property', key: 'city', value: 'Berlin' },
    ],
    states: [],
  },
  range: { from: '2026-10-25T00:00', to: '2026-10-26T00:00' },
  timeZone: 'Europe/Berlin',
  shape: {
    layout: 'points',
    average: null,
    address: true,
    geolocation: true,
    customProperties: ['costCentre'],
  },
  format: {
    delimiter: ';',
    decimalSeparator: ',',
    bom: true,
    headerNames: { time: 'Zeit', value: 'Wert', 'property:costCentre': 'Kostenstelle' },
    escapeFormulas: true,
    gzip: false,
  },
};

export const CLUSTER_PLAN = {
  title: 'Cluster New York',
  selection: {
    operator: 'or',
    conditions: [
      { field: 'property', key: 'city', value: 'New York' },
      { field: 'title', value: 'Pumpe B1' },
    ],
    states: ['flow', 'status'],
  },
  range: { relative: 'previousMonth' },
  timeZone: 'America/New_York',
  shape: { ...PLAIN_SHAPE, layout: 'clusterPerPacket' },
  format: { ...STANDARD, gzip: true },
};

export const DAILY_PLAN = {
  title: 'Daily flow',
  selection: {
    operator: 'and',
    conditions: [{ field: 'hierarchy', value: 'Werk Berlin' }],
    states: ['flow'],
  },
  range: { from: '2026-10-24T00:00', to: '2026-10-27T00:00' },
  timeZone: 'Europe/Berlin',
  shape: { ...PLAIN_SHAPE, average: 'day' },
  format: STANDARD,
};

/** A number as a German Excel cell, and a text cell after formula escaping. */
export const comma = (n: number) => String(n).replace('.', ',');
export const escaped = (text: string) => (/^[=+\-@\t\r]/.test(text) ? `'${text}` : text);
const B1 = ['Pumpe B1', 'Werk Berlin / Pumpe B1'];
const N1 = ['Pump N1', 'Plant NY / Pump N1'];

export function expectedOptionRows(world: ExportWorld, plan: 'excel' | 'cluster' | 'daily'): string[][] {
  if (plan === 'excel') {
    const [from, to] = [Date.parse('2026-10-24T22:00:00Z'), Date.parse('2026-10-25T23:00:00Z')];
    const meta = [...B1, 'Hauptstraße 1; Hof', '10115', 'Berlin', '', 'DE', '52,52', '13,405', "'=1+2"];
    const points = [
      ...world.berlinFlow.map((p) => ({ time: p.time, key: 'flow', unit: 'm³/h', cell: comma(p.value) })),
      ...world.berlinStatus.map((p) => ({ time: p.time, key: 'status', unit: '', cell: escaped(p.text) })),
    ]
      .filter((p) => p.time >= from && p.time < to)
      .sort((a, b) => a.time - b.time || a.key.localeCompare(b.key));
    return [
      [
        'Zeit',
        'twin',
        'hierarchy',
        'address.street',
        'address.postalCode',
        'address.city',
        'address.region',
        'address.country',
        'latitude',
        'longitude',
        'Kostenstelle',
        'state',
        'unit',
        'Wert',
      ],
      ...points.map((p) => [wallClock(p.time, 'Europe/Berlin'), ...meta, p.key, p.unit, p.cell]),
    ];
  }
  if (plan === 'cluster') {
    const end = Date.parse('2026-11-01T04:00:00Z');
    const status = new Map(world.berlinStatus.map((s) => [s.time, escaped(s.text)]));
    return [
      ['time', 'twin', 'hierarchy', 'flow', 'status'],
      ...world.berlinFlow.map((p) => [
        wallClock(p.time, 'America/New_York'),
        ...B1,
        String(p.value),
        status.get(p.time) ?? '',
      ]),
      ...world.nyFlow
        .filter((p) => p.time < end)
        .map((p) => [wallClock(p.time, 'America/New_York'), ...N1, String(p.value), '']),
    ];
  }
  const days = [
    Date.parse('2026-10-23T22:00:00Z'),
    Date.parse('2026-10-24T22:00:00Z'),
    Date.parse('2026-10-25T23:00:00Z'),
    Date.parse('2026-10-26T23:00:00Z'),
  ];
  const rows = [['time', 'twin', 'hierarchy', 'state', 'unit', 'value']];
  for (let d = 0; d < 3; d++) {
    const values = world.berlinFlow
      .filter((p) => p.time >= days[d]! && p.time < days[d + 1]!)
      .map((p) => p.value);
    if (values.length === 0) continue;
    const mean = values.reduce((a, b) => a + b, 0) / values.length;
    rows.push([wallClock(days[d]!, 'Europe/Berlin'), ...B1, 'flow', 'm³/h', String(mean)]);
  }
  return rows;
}
