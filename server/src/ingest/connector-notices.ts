import type { PacketOutcome } from './parse-packet.stage.js';

export interface ConnectorNotice {
  connectorId: string;
  level: 'warn';
  message: string;
  details: Record<string, unknown>;
}

/**
 * Connector log entries for refused packets (unknown device, parse error) and frame-counter
 * notices (frame-counter.ts), rate-limited: a gateway
 * that floods an unknown device_id must not flood the log. Per connector and kind at most one entry
 * per interval; the next entry says how many were left out meanwhile.
 */
export class ConnectorNotices {
  private readonly last = new Map<string, { at: number; suppressed: number }>();

  constructor(
    private readonly intervalMs = 60_000,
    private readonly now: () => number = Date.now,
    private readonly maxTracked = 10_000,
  ) {}

  /** The entries a batch should write. */
  collect(outcomes: PacketOutcome[]): ConnectorNotice[] {
    const notices: ConnectorNotice[] = [];
    const now = this.now();
    for (const o of outcomes) {
      if (o.status !== 'parsed' && o.status !== 'device-inactive') {
        const notice = this.note(o, o.status, now, describe(o));
        if (notice) notices.push(notice);
      }
      if (o.frameCounter) {
        const notice = this.note(o, `frame-counter-${o.frameCounter}`, now, describeFrameCounter(o));
        if (notice) notices.push(notice);
      }
    }
    return notices;
  }

  /** A notice of this reason for the packet's connector, unless one was written within the interval. */
  private note(o: PacketOutcome, reason: string, now: number, message: string): ConnectorNotice | undefined {
    const key = `${o.packet.connectorId}\u0000${reason}`;
    const seen = this.last.get(key);
    if (seen && now - seen.at < this.intervalMs) {
      seen.suppressed++;
      return undefined;
    }
    const suppressed = seen?.suppressed ?? 0;
    this.last.delete(key);
    this.last.set(key, { at: now, suppressed: 0 });
    if (this.last.size > this.maxTracked) this.last.delete(this.last.keys().next().value!);
    return {
      connectorId: o.packet.connectorId,
      level: 'warn',
      message: message + (suppressed > 0 ? ` (${suppressed} similar since the previous entry)` : ''),
      details: {
        reason,
        deviceId: o.packet.deviceKey,
        packetId: o.packet.id.toString(),
        ...(o.error ? { error: o.error } : {}),
        ...(o.packet.meta?.fCnt !== undefined && o.frameCounter ? { fCnt: o.packet.meta.fCnt } : {}),
        suppressed,
      },
    };
  }
}

function describeFrameCounter(o: PacketOutcome): string {
  const device = JSON.stringify(o.packet.deviceKey.slice(0, 200));
  const fCnt = o.packet.meta?.fCnt;
  return o.frameCounter === 'repeat'
    ? `Frame counter of device_id ${device} repeated (fCnt ${fCnt}): a retransmission or a replayed frame; the packet was processed`
    : `Frame counter of device_id ${device} went back (fCnt ${fCnt}): the device restarted or rejoined; the packet was processed. Set skipFrameCounterCheck on the connector or device to silence this`;
}

function describe(o: PacketOutcome): string {
  const device = JSON.stringify(o.packet.deviceKey.slice(0, 200));
  switch (o.status) {
    case 'unknown-device':
      return `Packet for unknown device_id ${device}: no device with this device_id is registered on this connector`;
    case 'parse-error':
      return `Packet of device_id ${device} could not be parsed: ${o.error ?? 'unknown error'}`;
    default:
      return `Packet of device_id ${device} could not be processed: ${o.error ?? 'unknown error'}`;
  }
}
