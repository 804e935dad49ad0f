import { describe, expect, it } from 'vitest';
import type { Reply } from '../../api/generated';
import { deviceBodyOf, deviceChanges, deviceDraftOf, deviceDraftProblems } from './device-form';

const device = {
  id: 'd1',
  device_id: 'pump-1',
  title: 'Pump 1',
  description: '',
  connectorId: 'c1',
  deviceDriverId: null,
  deviceTemplateId: null,
  parentId: null,
  permissionScopeId: null,
  tags: ['a', 'b'],
  groups: [],
  keyValueData: { room: 12, note: 'x' },
  externalId: null,
  referenceId: 'site-1',
  targetReferenceId: null,
  operationalStatus: 2,
  activationMethod: 'OTAA',
  skipFrameCounterCheck: false,
  devEui: null,
  endDeviceId: null,
} as unknown as Reply<'GET /xapi/v1/virtual-devices/{id}'>;

describe('device form', () => {
  it('round-trips a device unchanged: no changes, no problems', () => {
    const draft = deviceDraftOf(device);
    expect(deviceDraftProblems(draft)).toEqual([]);
    expect(deviceChanges(device, deviceBodyOf(draft))).toEqual({});
  });

  it('sends only what changed, with lists, numbers and JSON typed', () => {
    const draft = {
      ...deviceDraftOf(device),
      title: ' Pump one ',
      tags: 'b, c, b',
      keyValueData: '{"room": 13}',
      operationalStatus: '',
      externalId: 'ERP-1',
      referenceId: ' ',
      applicationSessionKey: 'AABB',
    };
    expect(deviceChanges(device, deviceBodyOf(draft))).toEqual({
      title: 'Pump one',
      tags: ['b', 'c'],
      keyValueData: { room: 13 },
      operationalStatus: null,
      externalId: 'ERP-1',
      referenceId: null,
      application_session_key: 'AABB',
    });
  });

  it('names fields the server would refuse', () => {
    const draft = deviceDraftOf(device);
    expect(deviceDraftProblems({ ...draft, keyValueData: '[1]', operationalStatus: '1.5' })).toEqual([
      'keyValueData',
      'operationalStatus',
    ]);
    expect(deviceDraftProblems({ ...draft, keyValueData: '{oops' })).toEqual(['keyValueData']);
  });
});
