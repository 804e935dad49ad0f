import { describe, expect, it } from 'vitest';
import { de } from '../../i18n/de';
import { en } from '../../i18n/en';
import {
  SECRET_MASK,
  settingsConfig,
  settingsDraft,
  settingsFields,
  settingsProblems,
} from './settings-form';

// Shaped like the mqtt-in settings the server serves (GET /xapi/v1/connector-kinds).
const schema = {
  type: 'object',
  required: ['url', 'topics'],
  properties: {
    url: { type: 'string', maxLength: 500 },
    topics: { type: 'array', items: { type: 'string' } },
    qos: {
      anyOf: [
        { const: 0, type: 'number' },
        { const: 1, type: 'number' },
      ],
    },
    password: { anyOf: [{ type: 'string' }, { type: 'null' }], writeOnly: true },
    clientKey: { anyOf: [{ type: 'string' }, { type: 'null' }], writeOnly: true },
    serverCa: { type: 'string', maxLength: 20000 },
    rejectUnauthorized: { type: 'boolean' },
    deviceIdTopicSegment: { type: 'integer', minimum: -50, maximum: 50 },
    headers: { type: 'object', patternProperties: { '^.*$': { type: 'string' } } },
  },
};

describe('connector settings form from the kind schema', () => {
  const fields = settingsFields(schema);

  it('derives one field per setting with its kind, choices and required flag', () => {
    expect(fields.map((f) => [f.key, f.kind, f.required])).toEqual([
      ['url', 'text', true],
      ['topics', 'list', true],
      ['qos', 'choice', false],
      ['password', 'secret', false],
      ['clientKey', 'secret', false],
      ['serverCa', 'long-text', false],
      ['rejectUnauthorized', 'flag', false],
      ['deviceIdTopicSegment', 'integer', false],
      ['headers', 'map', false],
    ]);
    expect(fields[2]!.choices).toEqual([0, 1]);
    expect(fields[7]).toMatchObject({ minimum: -50, maximum: 50 });
  });

  it('turns a draft into settings: lists by line, numbers and choices typed, empty fields left out', () => {
    const draft = {
      ...settingsDraft(fields),
      url: ' mqtt://broker:1883 ',
      topics: 'a/+/up\n\n b/# ',
      qos: '1',
      deviceIdTopicSegment: '-2',
      headers: 'x-site: north\nx-empty:',
    };
    expect(settingsConfig(fields, draft)).toEqual({
      url: 'mqtt://broker:1883',
      topics: ['a/+/up', 'b/#'],
      qos: 1,
      deviceIdTopicSegment: -2,
      headers: { 'x-site': 'north', 'x-empty': '' },
    });
    // A number that does not parse goes to the server as text, which names the field.
    expect(settingsConfig(fields, { ...draft, deviceIdTopicSegment: 'two' }).deviceIdTopicSegment).toBe(
      'two',
    );
  });

  it('edits a list of objects (a register map) as JSON text, and sends text that does not parse as it is', () => {
    const [map] = settingsFields({
      type: 'object',
      properties: { registers: { type: 'array', items: { type: 'object', properties: {} } } },
    });
    expect(map!.kind).toBe('json');
    const registers = [{ deviceId: 'boiler-1', state: 't', table: 'holding', address: 0 }];
    const draft = settingsDraft([map!], { registers });
    expect(JSON.parse(draft.registers as string)).toEqual(registers);
    expect(settingsConfig([map!], draft)).toEqual({ registers });
    expect(settingsConfig([map!], { registers: '[{' })).toEqual({ registers: '[{' });
  });

  it('starts secrets empty, keeps a stored one when left empty and sends a new one', () => {
    const read = {
      url: 'mqtt://h',
      topics: ['t'],
      password: SECRET_MASK,
      clientKey: SECRET_MASK,
      rejectUnauthorized: false,
    };
    const draft = settingsDraft(fields, read);
    expect(draft).toMatchObject({ topics: 't', password: '', rejectUnauthorized: false });
    const sent = settingsConfig(fields, { ...draft, clientKey: 'new key' }, read);
    expect(sent).toMatchObject({ password: SECRET_MASK, clientKey: 'new key', rejectUnauthorized: false });
    expect(settingsConfig(fields, settingsDraft(fields), {})).not.toHaveProperty('password');
  });
});

describe('connector settings problems', () => {
  const refusal = [
    {
      path: '/config/apiUrl',
      keyword: 'format',
      params: { format: 'http-url' },
      message: 'must be an http:// or https:// URL',
    },
    {
      path: '/config/t2',
      keyword: 'exclusiveMaximum',
      params: { comparison: '<', limit: 15 },
      message: 'must be less than t1',
    },
    { path: '/config/headers/X-Key', message: 'is not a header name that may be set' },
    { path: '/title', keyword: 'required', params: { missingProperty: 'title' }, message: 'is required' },
  ];

  it('puts each problem at its setting, in the console’s language where a keyword says it', () => {
    expect(settingsProblems(refusal, de.schemaProblems)).toEqual(
      new Map([
        ['apiUrl', 'muss eine http://- oder https://-URL sein'],
        ['t2', 'muss kleiner als 15 sein'],
        ['headers', 'is not a header name that may be set'],
        ['title', 'ist erforderlich'],
      ]),
    );
    expect(settingsProblems(refusal, en.schemaProblems).get('apiUrl')).toBe(
      'must be an http:// or https:// URL',
    );
    expect(settingsProblems([null, { message: 'no path' }], en.schemaProblems).size).toBe(0);
  });
});
