/**
 * A packet's network-server metadata in the packet history, compactly: one short line of what
 * matters for radio reception (port, frame counter, best gateway's RSSI/SNR, gateway, data rate)
 * and the event or MQTT topic. The full metadata stays in the cell's title.
 */

import { formatNumber } from '../format/number-format';

export interface MetaGateway {
  gatewayId?: string;
  gatewayEui?: string;
  rssi?: number;
  snr?: number;
}

export interface MetaLike {
  event?: string;
  topic?: string;
  fPort?: number;
  fCnt?: number;
  gateways?: MetaGateway[];
  dataRate?: string | number;
  spreadingFactor?: number;
  frequency?: number;
}

/** The best-heard gateway: highest RSSI, then SNR (as the server's `_meta.rssi`). */
function best(gateways: MetaGateway[] | undefined): MetaGateway | undefined {
  let found: MetaGateway | undefined;
  for (const g of gateways ?? []) {
    const rssi = g.rssi ?? -Infinity;
    const bestRssi = found?.rssi ?? -Infinity;
    if (!found || rssi > bestRssi || (rssi === bestRssi && (g.snr ?? -Infinity) > (found.snr ?? -Infinity)))
      found = g;
  }
  return found;
}

const number = (value: number, language: string) => formatNumber(value, language);

/** `fPort 2 · fCnt 4711 · −112 dBm · SNR −3.5 dB · gw-1 (+1) · SF9BW125`; empty without metadata. */
export function metaSummary(meta: MetaLike | null | undefined, language = 'en'): string[] {
  if (!meta) return [];
  const parts: string[] = [];
  if (meta.event && meta.event !== 'uplink') parts.push(meta.event);
  if (meta.fPort !== undefined) parts.push(`fPort ${meta.fPort}`);
  if (meta.fCnt !== undefined) parts.push(`fCnt ${meta.fCnt}`);
  const gateway = best(meta.gateways);
  if (gateway?.rssi !== undefined) parts.push(`${number(gateway.rssi, language)} dBm`);
  if (gateway?.snr !== undefined) parts.push(`SNR ${number(gateway.snr, language)} dB`);
  const name = gateway?.gatewayId ?? gateway?.gatewayEui;
  if (name) {
    const others = (meta.gateways?.length ?? 1) - 1;
    parts.push(others > 0 ? `${name} (+${others})` : name);
  }
  if (meta.dataRate !== undefined) parts.push(String(meta.dataRate));
  else if (meta.spreadingFactor !== undefined) parts.push(`SF${meta.spreadingFactor}`);
  if (meta.topic) parts.push(meta.topic);
  return parts;
}

/** Up to this many bytes a binary payload is shown as hex, as network servers and codecs show it. */
const HEX_MAX_BYTES = 64;

/**
 * A stored payload for the history: text as it is, unless it has control characters (short binary
 * frames such as LoRaWAN `01 04` are valid UTF-8 but unreadable); binary as hex, long binary as base64.
 */
export function payloadShown(text: string | null, base64: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what is looked for
  if (text !== null && !/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(text)) return text;
  const binary = atob(base64);
  if (binary.length > HEX_MAX_BYTES) return `base64: ${base64}`;
  const hex = Array.from(binary, (c) => c.charCodeAt(0).toString(16).padStart(2, '0'));
  return `hex: ${hex.join(' ')}`;
}
