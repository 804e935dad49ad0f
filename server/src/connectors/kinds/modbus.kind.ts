import { Type } from 'typebox';
import { DeliveryError } from '../../outgoing/delivery.js';
import { PLAIN_DEVICES, type ConnectorKindDescriptor } from '../connector-kind.js';
import { linkKindRuntime } from '../links/link.types.js';
import { MODBUS_TABLES, ModbusDecodeError, VALUE_TYPES } from '../modbus/modbus-codec.js';
import { parseCommand } from '../modbus/modbus-command.js';
import { ModbusExceptionError, modbusDriver, type ModbusSession } from '../modbus/modbus-link.js';
import { entriesOf, widthOf, type ModbusConfig } from '../modbus/modbus-map.js';
import { ConfigCheck } from './config-fields.js';
import { integer, oneOf, settingsObject, text } from './settings-fields.js';

const MAX_ENTRIES = 2000;
/** Exceptions a device answers while it is busy: the write may succeed later. */
const TRANSIENT_EXCEPTIONS = new Set([5, 6, 10, 11]);

const order = (what: string) => oneOf(['big', 'little'], `${what}; big (default) is the Modbus convention`);

const registerEntry = Type.Object(
  {
    deviceId: Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'device_id of the device the value belongs to',
    }),
    state: Type.String({
      pattern: '^[A-Za-z][A-Za-z0-9_-]{0,99}$',
      description: 'State key the value is stored under',
    }),
    unitId: integer(0, 255, 'Unit (slave) id; default the connector unitId'),
    table: oneOf(MODBUS_TABLES, 'holding / input registers, coil / discrete-input bits'),
    address: integer(0, 65535, 'Zero-based protocol address (holding register 40001 is address 0)'),
    type: oneOf(VALUE_TYPES, 'Register tables: how the value is encoded (default uint16)'),
    wordOrder: order('Multi-register values: which register holds the most significant word'),
    byteOrder: order('Byte order within each register'),
    scale: Type.Number({ description: 'value = raw × scale + offset (default 1)' }),
    offset: Type.Number({ description: 'Added after scaling (default 0)' }),
    poll: Type.Boolean({ description: 'false: only written by downlinks, never read' }),
  },
  { required: ['deviceId', 'state', 'table', 'address'], additionalProperties: false },
);

function check(config: Record<string, unknown>) {
  const check = new ConfigCheck(config);
  const registers = config.registers;
  if (!Array.isArray(registers)) return check.problems;
  const seen = new Set<string>();
  registers.forEach((r: Record<string, unknown>, i) => {
    if (typeof r !== 'object' || r === null) return;
    const key = `${String(r.deviceId)}\u0000${String(r.state)}`;
    if (seen.has(key))
      check.problem(
        `registers/${i}/state`,
        'unique',
        { value: r.state },
        'appears twice for the same device',
      );
    seen.add(key);
    const bits = r.table === 'coil' || r.table === 'discrete';
    for (const field of ['type', 'wordOrder', 'byteOrder', 'scale', 'offset'])
      if (bits && r[field] !== undefined)
        check.custom(`registers/${i}/${field}`, `does not apply to ${String(r.table)} bits`);
    if (r.scale === 0) check.custom(`registers/${i}/scale`, 'must not be 0');
    const type = (r.type ?? 'uint16') as (typeof VALUE_TYPES)[number];
    const width = widthOf({ table: r.table as 'holding', type });
    if (typeof r.address === 'number' && r.address + width > 65536)
      check.problem(
        `registers/${i}/address`,
        'maximum',
        { limit: 65536 - width },
        `a ${type} at ${r.address} runs past register 65535`,
      );
  });
  return check.problems;
}

/** The map entries of one device, for its downlinks. */
const entriesFor = (session: ModbusSession, deviceKey: string) =>
  session.entries.filter((e) => e.deviceId === deviceKey);

/**
 * Modbus TCP client (server/src/connectors/modbus/): polls holding and input registers, coils and
 * discrete inputs per a register map, adjacent entries in one read; downlinks write holding
 * registers and coils mapped to the device (docs/connectors/modbus.md).
 */
export const modbusKind: ConnectorKindDescriptor = {
  type: 'modbus',
  direction: 'incoming',
  summary:
    'Polls a Modbus TCP device or gateway per a register map; writes registers and coils as downlinks.',
  capabilities: ['subscribe', 'receives', 'downlink', 'monitoring'],
  monitoring: 'connection',
  settings: settingsObject(
    {
      host: text(253, 'Host name or IP address of the Modbus TCP server (device or gateway)'),
      port: integer(1, 65535, 'TCP port (default 502)'),
      unitId: integer(0, 255, 'Unit (slave) id of entries that name none (default 1)'),
      pollIntervalMs: integer(100, 3_600_000, 'Time between the starts of two polls (default 5000)'),
      timeoutMs: integer(
        100,
        60_000,
        'Longest wait for an answer; a missing one drops the link (default 3000)',
      ),
      report: oneOf(
        ['every-poll', 'change'],
        'every-poll (default): store each value of each poll; change: only changed values',
      ),
      registers: Type.Array(registerEntry, {
        minItems: 1,
        maxItems: MAX_ENTRIES,
        description: 'The register map: one entry per value',
      }),
    },
    ['host', 'registers'],
  ),
  check,
  devices: PLAIN_DEVICES,
  runtime: ({ links }) => ({
    ...linkKindRuntime(links, 'modbus', modbusDriver()),
    downlink: {
      async send(connector, downlink) {
        const session = links.session(connector.id) as ModbusSession | undefined;
        const entries = session
          ? entriesFor(session, downlink.device.deviceKey)
          : entriesOf(connector.config as unknown as ModbusConfig).filter(
              (e) => e.deviceId === downlink.device.deviceKey,
            );
        let command;
        try {
          command = parseCommand(downlink.bytes, entries);
        } catch (error) {
          if (error instanceof ModbusDecodeError)
            throw new DeliveryError(error.message, false, 'MODBUS_WRITE_INVALID');
          throw error;
        }
        if (!session) throw new DeliveryError('The connector is not connected to its Modbus server', true);
        try {
          await session.write(command);
        } catch (error) {
          if (error instanceof ModbusExceptionError)
            throw new DeliveryError(error.message, TRANSIENT_EXCEPTIONS.has(error.code), 'MODBUS_EXCEPTION');
          throw new DeliveryError(`The write was not answered: ${(error as Error).message}`, true);
        }
        return { status: 'sent' };
      },
    },
  }),
};
