import type { DownlinkSender } from '../../downlinks/downlink-delivery.js';
import { DeliveryError } from '../../outgoing/delivery.js';
import type { LinkHost } from '../links/link.types.js';
import type { OpcuaConfig } from './opcua-link.js';
import { OpcuaSession } from './opcua-session.js';
import { OpcuaValueError, parseWriteCommand } from './opcua-values.js';

/**
 * Downlinks of an opcua connector are writes: the bytes are `{"nodeId","value","dataType"}`
 * (opcua-values.ts). A device writes only the nodes mapped to it, so a downlink permission on one
 * device is not a write permission on the whole server. The write's status code is the downlink's
 * `remoteId`; a Bad one fails the downlink with it.
 */
export function opcuaDownlinkSender(links: LinkHost): DownlinkSender {
  return {
    async send(connector, downlink) {
      let command;
      try {
        command = parseWriteCommand(downlink.bytes);
      } catch (error) {
        if (error instanceof OpcuaValueError) throw new DeliveryError(error.message, false);
        throw error;
      }
      const nodes = (connector.config as unknown as OpcuaConfig).nodes ?? [];
      if (!nodes.some((n) => n.nodeId === command.nodeId && n.deviceId === downlink.device.deviceKey))
        throw new DeliveryError(`${command.nodeId} is not a node mapped to this device`, false);
      const session = links.session(connector.id);
      if (!(session instanceof OpcuaSession))
        throw new DeliveryError('The connector is not connected to its OPC UA server', true);
      let status: string;
      try {
        status = await session.write(command);
      } catch (error) {
        if (error instanceof OpcuaValueError) throw new DeliveryError(error.message, false);
        throw new DeliveryError(`The write failed: ${(error as Error).message.split('\n')[0]}`, true);
      }
      if (status.startsWith('Bad')) throw new DeliveryError(`The server refused the write: ${status}`, false);
      return { status: 'sent', remoteId: status };
    },
  };
}
