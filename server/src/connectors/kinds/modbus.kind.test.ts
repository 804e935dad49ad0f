import { describe, expect, it } from 'vitest';
import { settingsValidator } from './derive.js';
import { modbusKind } from './modbus.kind.js';

const validate = settingsValidator(modbusKind);
const entry = { deviceId: 'boiler-1', state: 'flowTemp', table: 'holding', address: 0, type: 'float32' };

describe('modbus kind settings', () => {
  it('accepts a register map with every option', () => {
    expect(
      validate({
        host: 'plc.example',
        port: 5020,
        unitId: 3,
        pollIntervalMs: 1000,
        timeoutMs: 500,
        report: 'change',
        registers: [
          { ...entry, unitId: 4, wordOrder: 'little', byteOrder: 'big', scale: 0.1, offset: -40 },
          { deviceId: 'pump-1', state: 'running', table: 'coil', address: 7, poll: false },
        ],
      }),
    ).toEqual([]);
  });

  it('names each wrong entry field', () => {
    const problems = validate({
      host: 'plc.example',
      registers: [
        entry,
        { ...entry, address: 65535 },
        { deviceId: 'pump-1', state: 'running', table: 'coil', address: 1, type: 'int16' },
        { ...entry, state: 'gain', scale: 0 },
        { ...entry, state: '1bad', table: 'flash', extra: true },
      ],
    });
    expect(problems.map((p) => `${p.path} ${p.message}`)).toEqual(
      expect.arrayContaining([
        '/config/registers/1/state appears twice for the same device',
        '/config/registers/1/address a float32 at 65535 runs past register 65535',
        '/config/registers/2/type does not apply to coil bits',
        '/config/registers/3/scale must not be 0',
      ]),
    );
    expect(problems.map((p) => p.path)).toEqual(
      expect.arrayContaining([
        '/config/registers/4/state',
        '/config/registers/4/table',
        '/config/registers/4',
      ]),
    );
    expect(validate({ host: 'x', registers: [] }).map((p) => p.path)).toEqual(['/config/registers']);
  });
});
