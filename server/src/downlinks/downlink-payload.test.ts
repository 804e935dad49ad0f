import { describe, expect, it } from 'vitest';
import type { AppError } from '../platform/errors.js';
import { checkFPort, checkOneSource, decodeBytes } from './downlink-payload.js';
import { downlinkTopicFor } from './delivery/mqtt.js';
import { downlinkIdFromCorrelationIds, ttsCorrelationId } from './delivery/tts.js';

const code = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return (error as AppError).code;
  }
  return 'none';
};

describe('downlink payloads', () => {
  it('read bytes in the encoding that is said, hex by default', () => {
    expect(decodeBytes('01 a4').toString('hex')).toBe('01a4');
    expect(decodeBytes('AQI=', 'base64').toString('hex')).toBe('0102');
    // Valid hex is valid base64 too: the encoding decides, it is never guessed.
    expect(decodeBytes('0102', 'base64').toString('hex')).toBe('d35d36');
    expect(code(() => decodeBytes('0g'))).toBe('VALIDATION_ERROR');
    expect(code(() => decodeBytes('abc'))).toBe('VALIDATION_ERROR');
    expect(code(() => decodeBytes('AQI', 'base64'))).toBe('VALIDATION_ERROR');
    expect(code(() => decodeBytes('00'.repeat(2049)))).toBe('VALIDATION_ERROR');
  });

  it('take exactly one of bytes and data, and application fPorts only', () => {
    expect(checkOneSource({ bytes: '01' })).toBe('bytes');
    expect(checkOneSource({ data: null })).toBe('data');
    expect(code(() => checkOneSource({}))).toBe('VALIDATION_ERROR');
    expect(code(() => checkOneSource({ bytes: '01', data: 1 }))).toBe('VALIDATION_ERROR');
    expect(checkFPort(223, 'bytes')).toBe(223);
    for (const bad of [0, 224, 1.5, null, undefined])
      expect(code(() => checkFPort(bad, 'bytes'))).toBe('VALIDATION_ERROR');
    // Where the connector carries no port, none is needed; one given is still checked.
    expect(checkFPort(undefined, 'bytes', false)).toBeNull();
    expect(code(() => checkFPort(224, 'bytes', false))).toBe('VALIDATION_ERROR');
  });

  it('fill an mqtt-in downlink topic and refuse values that would widen it', () => {
    const device = { deviceKey: 'm-7', devEui: 'A1B2C3D4E5F60718', fPort: 3 };
    expect(downlinkTopicFor('d/{deviceId}/{devEui}/{fPort}/{other}', device)).toBe(
      'd/m-7/a1b2c3d4e5f60718/3/{other}',
    );
    expect(() => downlinkTopicFor('d/{deviceId}/{fPort}', { ...device, fPort: null })).toThrow(
      'no fPort for {fPort}',
    );
    expect(() => downlinkTopicFor('d/{deviceId}', { ...device, deviceKey: 'a/b' })).toThrow(
      'cannot be a topic level',
    );
    expect(() => downlinkTopicFor('d/{deviceId}', { ...device, deviceKey: '#' })).toThrow(
      'cannot be a topic level',
    );
  });

  it('find their id among the correlation ids The Things Stack echoes', () => {
    const id = '01a21645-58d6-721d-b9ff-4c8071234567';
    expect(downlinkIdFromCorrelationIds(['as:downlink:01J', ttsCorrelationId(id)])).toBe(id);
    expect(downlinkIdFromCorrelationIds(['as:downlink:01J'])).toBeUndefined();
    expect(downlinkIdFromCorrelationIds(undefined)).toBeUndefined();
  });
});
