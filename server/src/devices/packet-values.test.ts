import { afterAll, describe, expect, it } from 'vitest';
import type { TargetVariable } from '../drivers/device-driver.entity.js';
import { DriverParsing } from '../drivers/driver-parsing.service.js';
import type { DeviceRef } from '../ingest/resolve-device.stage.js';
import { packetMismatches, type PacketToCheck } from './packet-values.js';

const parsing = new DriverParsing();
afterAll(() => parsing.stop());

const device = (targetVariables: TargetVariable[]): DeviceRef => ({
  id: 'device',
  accountId: 'account',
  permissionScopeId: null,
  referenceId: null,
  driver: { id: 'driver', updatedAt: new Date(0), parser: { type: 'json' }, targetVariables },
});

const THERMOMETER = device([
  { key: 'temperature', type: 'number', unit: '°C' },
  { key: 'open', type: 'boolean' },
]);
const address = { connectorId: 'connector', deviceKey: 'boiler-1' };

let nextId = 1;
const packet = (payload: unknown, status: string | null = 'parsed'): PacketToCheck => ({
  id: String(nextId++),
  receivedAt: new Date(),
  source: 'test',
  status,
  meta: null,
  payload: Buffer.from(typeof payload === 'string' ? payload : JSON.stringify(payload)),
});

describe('packetMismatches', () => {
  it("names each value that does not fit its driver variable's type, with the device states' warning", async () => {
    const [checked] = await packetMismatches(parsing, THERMOMETER, address, [
      packet({ temperature: '21.5', open: false, humidity: 'wet' }),
    ]);
    expect(checked).toEqual([
      {
        key: 'temperature',
        value: '21.5',
        valueType: 'number',
        warning: 'value "21.5" does not fit value type number',
      },
    ]);
  });

  it('checks every item of an array payload', async () => {
    const [checked] = await packetMismatches(parsing, THERMOMETER, address, [
      packet([{ temperature: 20 }, { temperature: 'n/a', open: 1 }]),
    ]);
    expect(checked?.map((m) => m.key)).toEqual(['temperature', 'open']);
  });

  it('gives [] when every value fits or the driver declares nothing', async () => {
    const noVariables = device([]);
    const checked = [
      ...(await packetMismatches(parsing, THERMOMETER, address, [packet({ temperature: 21.5, open: null })])),
      ...(await packetMismatches(parsing, noVariables, address, [packet({ temperature: 'x' })])),
    ];
    expect(checked).toEqual([[], []]);
  });

  it('leaves packets unchecked that did not parse, then or with the driver now', async () => {
    const checked = await packetMismatches(parsing, THERMOMETER, address, [
      packet({ temperature: 'x' }, 'parse-error'),
      packet({ temperature: 'x' }, null),
      packet('not json'),
    ]);
    expect(checked).toEqual([null, null, null]);
  });

  it('stops parsing once the time budget is spent; later packets stay unchecked', async () => {
    let clock = 0;
    // Each reading of the clock is 100 ms after the last: the budget of 250 ms covers two packets.
    const now = () => (clock += 100);
    const checked = await packetMismatches(
      parsing,
      THERMOMETER,
      address,
      [1, 2, 3, 4].map(() => packet({ temperature: 'x' })),
      250,
      now,
    );
    expect(checked.map((c) => c?.length ?? null)).toEqual([1, 1, null, null]);
  });

  it("does not run a driver's script on this thread: its packets stay unchecked", async () => {
    const scripted: DeviceRef = {
      ...THERMOMETER,
      driver: {
        ...THERMOMETER.driver!,
        parser: { type: 'javascript', script: 'function parse(input) { return { temperature: "x" }; }' },
      },
    };
    const checked = await packetMismatches(parsing, scripted, address, [packet({ temperature: 'x' })]);
    expect(checked).toEqual([null]);
  });
});
