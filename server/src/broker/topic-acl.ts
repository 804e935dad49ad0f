/**
 * The embedded broker's topic ACL (ARCHITECTURE.md section 3), deny by default: a client of connector C
 * may publish (and set its will) only to `connectors/{C}/devices/{device_id}/up` and subscribe only to
 * `connectors/{C}/devices/+/down` or `connectors/{C}/devices/{device_id}/down`. Everything else — other
 * connectors' topics, `#`, `+/…`, `$SYS/…` — is refused. Each topic family is a handler class; adding a
 * family means adding a class to TOPIC_FAMILIES, never a branch elsewhere.
 */

export interface TopicFamily {
  /** The device a client of `connectorId` publishes for on `topic`, or null when it may not publish there. */
  canPublish(connectorId: string, topic: string): string | null;
  canSubscribe(connectorId: string, filter: string): boolean;
  /** Whether a packet on `topic` (published by the server or a device) may reach a client of `connectorId`. */
  canReceive(connectorId: string, topic: string): boolean;
}

/** A `device_id` topic segment: non-empty, no wildcard, no NUL (MQTT forbids it), at most 200 characters. */
export function isDeviceSegment(segment: string): boolean {
  return (
    segment.length > 0 &&
    segment.length <= 200 &&
    !segment.includes('+') &&
    !segment.includes('#') &&
    !segment.includes('\u0000')
  );
}

/** `connectors/{C}/devices/{device}/{leaf}` split, or null when `topic` has any other shape. */
function deviceTopic(topic: string): { connectorId: string; device: string; leaf: string } | null {
  const parts = topic.split('/');
  if (parts.length !== 5 || parts[0] !== 'connectors' || parts[2] !== 'devices') return null;
  return { connectorId: parts[1]!, device: parts[3]!, leaf: parts[4]! };
}

/** Device uplinks: published by the connector's own clients, never delivered to any client. */
export class DeviceUplinkTopics implements TopicFamily {
  canPublish(connectorId: string, topic: string): string | null {
    const t = deviceTopic(topic);
    if (!t || t.leaf !== 'up' || t.connectorId !== connectorId || !isDeviceSegment(t.device)) return null;
    return t.device;
  }

  canSubscribe(): boolean {
    return false;
  }

  canReceive(): boolean {
    return false;
  }
}

/** Device downlinks: published by the server, received by the connector's own clients. */
export class DeviceDownlinkTopics implements TopicFamily {
  canPublish(): string | null {
    return null;
  }

  canSubscribe(connectorId: string, filter: string): boolean {
    const t = deviceTopic(filter);
    if (!t || t.leaf !== 'down' || t.connectorId !== connectorId) return false;
    return t.device === '+' || isDeviceSegment(t.device);
  }

  canReceive(connectorId: string, topic: string): boolean {
    const t = deviceTopic(topic);
    return !!t && t.leaf === 'down' && t.connectorId === connectorId && isDeviceSegment(t.device);
  }
}

const TOPIC_FAMILIES: TopicFamily[] = [new DeviceUplinkTopics(), new DeviceDownlinkTopics()];

/** The union of the families: allowed when one family allows it. */
export const topicAcl = {
  /** The `device_id` of an allowed uplink, or null when refused. */
  uplinkDevice(connectorId: string, topic: string): string | null {
    for (const family of TOPIC_FAMILIES) {
      const device = family.canPublish(connectorId, topic);
      if (device !== null) return device;
    }
    return null;
  },
  canSubscribe(connectorId: string, filter: string): boolean {
    return TOPIC_FAMILIES.some((family) => family.canSubscribe(connectorId, filter));
  },
  canReceive(connectorId: string, topic: string): boolean {
    return TOPIC_FAMILIES.some((family) => family.canReceive(connectorId, topic));
  },
};

export const uplinkTopic = (connectorId: string, device: string) =>
  `connectors/${connectorId}/devices/${device}/up`;
export const downlinkTopic = (connectorId: string, device: string) =>
  `connectors/${connectorId}/devices/${device}/down`;
