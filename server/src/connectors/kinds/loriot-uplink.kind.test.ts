import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Connector } from '../connector.entity.js';
import { loriotMessage } from './loriot-uplink.kind.js';

const fixture = (name: string) =>
  JSON.parse(
    readFileSync(new URL(`../../../../test/fixtures/lorawan/${name}.json`, import.meta.url), 'utf8'),
  ) as Record<string, unknown>;
const read = (body: unknown, config: Record<string, unknown> = {}) =>
  loriotMessage(body, Object.assign(new Connector(), { id: 'c1', config }));

describe('loriot-uplink kind', () => {
  it('reads the documented rx message: hex bytes, port, frame counter, battery', () => {
    const { items, events } = read(fixture('loriot-docs-rx'));
    expect(events).toEqual([]);
    expect(items).toEqual([
      {
        deviceKey: '0102030405060708',
        payload: Buffer.from([0x01, 0x02, 0xaa, 0xbb]),
        meta: {
          devEui: '0102030405060708',
          fPort: 1,
          fCnt: 1,
          confirmed: false,
          receivedAt: '2016-08-10T17:37:55.433Z',
          battery: 100,
        },
      },
    ]);
  });

  it('reports the gateways of a gw message online; its frame is the uplink only when configured', () => {
    const gw = fixture('loriot-docs-gw');
    const heard = {
      type: 'gateway',
      connectorId: 'c1',
      gatewayEui: '7076ffffff053a13',
      online: true,
      location: { latitude: 57.013938, longitude: 9.9874619 },
      at: new Date(1470850675433),
    };
    expect(read(gw)).toEqual({ items: [], events: [heard], logs: [] });
    const asUplink = read(gw, { uplinkFrom: 'gw' });
    expect(asUplink.events).toEqual([heard]);
    expect(asUplink.items[0]!.meta).toMatchObject({
      fPort: 1,
      frequency: 868500000,
      dataRate: 'SF12 BW125 4/5',
      spreadingFactor: 12,
      bandwidth: 125000,
      codingRate: '4/5',
      gateways: [
        {
          gatewayEui: '7076ffffff053a13',
          rssi: -130,
          snr: 1.2,
          location: { latitude: 57.013938, longitude: 9.9874619 },
        },
      ],
    });
    // With gw as the uplink, the rx message of the same frame is not stored twice; gateways it
    // names (gateway information enabled) are heard all the same.
    const rx = { ...fixture('loriot-docs-rx'), gws: gw.gws };
    expect(read(rx, { uplinkFrom: 'gw' })).toEqual({ items: [], events: [heard], logs: [] });
  });

  it('stores no MAC-only frame, and reports no receive time it was not given', () => {
    const rx = { cmd: 'rx', EUI: 'BE7A000000000001', fcnt: 4, port: 0, rssi: -100, snr: 2 };
    expect(read(rx).items).toEqual([]);
    const gws = [{ rssi: -100, snr: 2, gweui: '7076FFFFFF053A13' }];
    const noTime = read({ ...rx, port: 2, data: '01', ts: 1e20, gws });
    expect(noTime.items[0]!.meta!.receivedAt).toBeUndefined();
    expect(noTime.events).toHaveLength(1);
    expect(Number.isFinite(noTime.events[0]!.at.getTime())).toBe(true);
  });

  it('ignores other messages and refuses encrypted or broken payloads', () => {
    expect(read({ cmd: 'txd', EUI: '01' })).toEqual({ items: [], events: [], logs: [] });
    expect(() => read({ cmd: 'rx', EUI: '01', encdata: 'ABCD' })).toThrow(/encrypted/);
    expect(() => read({ cmd: 'rx', EUI: '01', data: 'xyz' })).toThrow(/hex/);
    expect(() => read({ cmd: 'rx', data: '01' })).toThrow(/EUI is missing/);
  });
});
