import { describe, expect, it } from 'vitest';
import { DeliveryError } from '../../../outgoing/delivery.js';
import { iec104Kind } from '../iec104.kind.js';
import { CommandError, parseCommand } from './command.js';
import { parsePoints, pointKey } from './points.js';
import { checkIec104 } from './settings.js';

const CSV = [
  '# exported from the station configuration',
  'ioa;device_id;state;type;scale;ca',
  '1001;feeder-1;temperature;float;;',
  '1101;feeder-1;power;scaled;0,1;',
  '1001;feeder-2;temperature;;;7',
  '6001;switch-1;breaker;double-command;;',
].join('\r\n');

describe('IEC 104 point list', () => {
  it('reads monitoring and command points with their common address, type and scale', () => {
    const points = parsePoints(CSV, 1);
    expect(points.monitoring.get(pointKey(1, 1101))).toEqual({
      ca: 1,
      ioa: 1101,
      deviceId: 'feeder-1',
      state: 'power',
      type: 'scaled',
      scale: 0.1,
    });
    expect(points.monitoring.get(pointKey(7, 1001))).toMatchObject({ deviceId: 'feeder-2', scale: 1 });
    expect(points.monitoring.get(pointKey(7, 1001))!.type).toBeUndefined();
    expect(points.commands).toEqual([
      { ca: 1, ioa: 6001, deviceId: 'switch-1', state: 'breaker', type: 'double-command', scale: 1 },
    ]);
  });

  it('names the line of a bad row in the connector settings problems', () => {
    const problems = (points: string, extra = {}) => checkIec104({ host: 'rtu-1', points, ...extra });
    expect(problems('ioa,device\n1,a')).toEqual([
      {
        path: '/config/points',
        message: 'point list line 1: the header needs the columns ioa, device_id and state',
      },
    ]);
    expect(problems('ioa,device_id,state\n1,a,t\n1,b,u')[0]!.message).toBe(
      'point list line 3: address 1:1 is listed twice',
    );
    expect(problems('ioa,device_id,state\n16777216,a,t')[0]!.message).toMatch(
      /line 2: ioa must be an integer/,
    );
    expect(problems('ioa,device_id,state,type\n1,a,t,analog')[0]!.message).toMatch(
      /line 2: type must be one of/,
    );
    expect(problems('ioa,device_id,state\n1,a,.t')[0]!.message).toMatch(/line 2: state must be/);
    expect(problems('ioa,device_id,state\n1,a,t', { t1: 5, t2: 5, k: 4, w: 5 }).map((p) => p.path)).toEqual([
      '/config/t2',
      '/config/w',
    ]);
    expect(iec104Kind.check!({ host: 'rtu-1', points: CSV })).toEqual([]);
  });
});

describe('IEC 104 commands from downlink bytes', () => {
  const points = parsePoints(CSV, 1);
  const doc = (value: unknown) => Buffer.from(JSON.stringify(value));

  it('finds the device’s command point by state or IOA', () => {
    expect(parseCommand(doc({ state: 'breaker', value: 'ON' }), 'switch-1', points)).toMatchObject({
      point: { ioa: 6001 },
      on: true,
    });
    expect(parseCommand(doc({ ioa: 6001, value: 0, select: false }), 'switch-1', points)).toMatchObject({
      on: false,
      select: false,
    });
  });

  it('refuses what is not a command of this device with a clear message', () => {
    const refused = (bytes: Buffer, device = 'switch-1') => {
      try {
        parseCommand(bytes, device, points);
      } catch (error) {
        expect(error).toBeInstanceOf(CommandError);
        return (error as Error).message;
      }
      throw new Error('accepted');
    };
    expect(refused(Buffer.from([0xbe, 0xef]))).toMatch(/must be a JSON document/);
    expect(refused(doc([1]))).toMatch(/must be a JSON object/);
    expect(refused(doc({ state: 'breaker', value: 'half' }))).toMatch(/"value" must be/);
    expect(refused(doc({ state: 'breaker', value: true }), 'feeder-1')).toMatch(
      /device feeder-1 has no command point "breaker"/,
    );
    expect(refused(doc({ ioa: 1001, value: true }), 'feeder-1')).toMatch(/no command point at IOA 1001/);
    expect(refused(doc({ value: true }))).toMatch(/name the point/);
  });

  it('fails a downlink with a bad command for good, before it looks for the link', async () => {
    const sender = iec104Kind.runtime!({
      links: { register: () => {}, start: async () => {}, stop: async () => {}, session: () => undefined },
    } as never).downlink!;
    const connector = { id: 'c', config: { host: 'rtu-1', points: CSV } } as never;
    const device = { id: 'd', deviceKey: 'switch-1' };
    const send = (bytes: Buffer) =>
      sender.send(connector, { id: 'x', device, fPort: 1, bytes, confirmed: false });
    await expect(send(doc({ state: 'nope', value: true }))).rejects.toMatchObject({ retryable: false });
    await expect(send(doc({ state: 'breaker', value: true }))).rejects.toEqual(
      new DeliveryError('The IEC 104 link is down', true),
    );
  });
});
