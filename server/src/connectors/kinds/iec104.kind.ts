import { PLAIN_DEVICES, type ConnectorKindDescriptor } from '../connector-kind.js';
import { DeliveryError } from '../../outgoing/delivery.js';
import { linkKindRuntime, type LinkDriver } from '../links/link.types.js';
import { CommandError, parseCommand } from './iec104/command.js';
import { Iec104Session } from './iec104/session.js';
import { checkIec104, iec104Settings, settingsOf } from './iec104/settings.js';

const driver: LinkDriver<Iec104Session> = {
  target: (connector) => {
    const { host, port } = settingsOf(connector);
    return `iec104://${host.includes(':') ? `[${host}]` : host}:${port}`;
  },
  open: (ctx) => Iec104Session.open(ctx, settingsOf(ctx.connector)),
};

/**
 * IEC 60870-5-104 controlling station (docs/connectors/iec104.md, docs/adr/0127-iec104-client.md):
 * keeps a TCP link to one outstation, stores monitoring values through the point list and sends
 * single and double commands as downlinks.
 */
export const iec104Kind: ConnectorKindDescriptor = {
  type: 'iec104',
  direction: 'incoming',
  summary:
    'IEC 60870-5-104 client: interrogates an outstation, maps information objects to device states by a CSV point list, sends single and double commands.',
  capabilities: ['subscribe', 'receives', 'downlink', 'monitoring'],
  monitoring: 'connection',
  settings: iec104Settings,
  check: checkIec104,
  devices: PLAIN_DEVICES,
  runtime: ({ links }) => ({
    ...linkKindRuntime(links, 'iec104', driver),
    downlink: {
      async send(connector, downlink) {
        const settings = settingsOf(connector);
        let command;
        try {
          command = parseCommand(downlink.bytes, downlink.device.deviceKey, settings.points);
        } catch (error) {
          if (error instanceof CommandError) throw new DeliveryError(error.message, false);
          throw error;
        }
        const session = links.session(connector.id);
        if (!(session instanceof Iec104Session)) throw new DeliveryError('The IEC 104 link is down', true);
        await session.command(command.point, command.on, command.select ?? settings.selectBeforeOperate);
        return { status: 'sent' };
      },
    },
  }),
};
