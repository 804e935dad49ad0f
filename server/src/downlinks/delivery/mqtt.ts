import type { MqttInConfig } from '../../connectors/kinds/mqtt-in.kind.js';
import { DeliveryError } from '../../outgoing/delivery.js';
import type { DownlinkSender } from '../downlink-delivery.js';

/**
 * Downlinks over MQTT. The payload is the downlink's bytes as they are; the fPort is not carried
 * (MQTT devices have none; a LoRaWAN bridge behind mqtt-in reads it from the topic template).
 */

export interface BrokerPublisher {
  /** Publishes on `connectors/{connectorId}/devices/{deviceKey}/down` of the embedded broker (topic ACL). */
  publishDownlink(connectorId: string, deviceKey: string, payload: Buffer): Promise<void>;
}

export interface ExternalPublisher {
  /** Publishes with the connector's running mqtt-in client; rejects when it is not connected. */
  publish(connectorId: string, topic: string, payload: Buffer): Promise<void>;
}

/** The embedded broker: published is delivered, as far as Stellwerk can tell (status `sent`). */
export function brokerDownlinkSender(broker: BrokerPublisher): DownlinkSender {
  return {
    async send(connector, downlink) {
      try {
        await broker.publishDownlink(connector.id, downlink.device.deviceKey, downlink.bytes);
      } catch (error) {
        throw new DeliveryError(`The broker did not publish: ${(error as Error).message}`, true);
      }
      return { status: 'sent' };
    },
  };
}

/** Placeholders of an mqtt-in `downlinkTopic`; values must not widen the topic (no `/`, `+`, `#`). */
export function downlinkTopicFor(
  template: string,
  device: { deviceKey: string; devEui?: string | null; fPort: number | null },
): string {
  const values: Record<string, string> = {
    deviceId: device.deviceKey,
    devEui: (device.devEui ?? device.deviceKey).toLowerCase(),
    ...(device.fPort === null ? {} : { fPort: String(device.fPort) }),
  };
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => {
    const value = values[name];
    if (value === undefined && name === 'fPort') {
      // Queued before the topic named {fPort}: it cannot be published where the setting says.
      throw new DeliveryError('The downlink has no fPort for {fPort}', false, 'DOWNLINK_TOPIC_INVALID');
    }
    if (value === undefined) return whole;
    if (/[/+#]/.test(value) || value.includes('\u0000')) {
      throw new DeliveryError(
        `{${name}} "${value}" cannot be a topic level`,
        false,
        'DOWNLINK_TOPIC_INVALID',
      );
    }
    return value;
  });
}

/** mqtt-in: publishes on the external broker the connector subscribes to, on its `downlinkTopic`. */
export function mqttInDownlinkSender(client: ExternalPublisher): DownlinkSender {
  return {
    needsFPort: (connector) =>
      (connector.config as unknown as MqttInConfig).downlinkTopic?.includes('{fPort}') ?? false,
    async send(connector, downlink) {
      const template = (connector.config as unknown as MqttInConfig).downlinkTopic;
      if (!template) {
        throw new DeliveryError(
          'The connector has no downlinkTopic setting',
          false,
          'DOWNLINK_TOPIC_MISSING',
        );
      }
      const topic = downlinkTopicFor(template, { ...downlink.device, fPort: downlink.fPort });
      try {
        await client.publish(connector.id, topic, downlink.bytes);
      } catch (error) {
        throw new DeliveryError(`Not published on the external broker: ${(error as Error).message}`, true);
      }
      return { status: 'sent' };
    },
  };
}
