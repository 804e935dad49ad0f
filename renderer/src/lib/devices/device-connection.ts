/**
 * How a device reaches the embedded broker: its uplink topic (the broker's ACL admits only
 * `connectors/{connectorId}/devices/{device_id}/up`, server/src/broker/topic-acl.ts) and a
 * `mosquitto_pub` line an engineer can paste into a shell to send a test packet.
 */
export const uplinkTopic = (connectorId: string, deviceId: string) =>
  `connectors/${connectorId}/devices/${deviceId}/up`;

/** Host and port of the connector's `apiEndpoint` (`mqtt://host:port`); null when it is not one. */
export function brokerAddress(apiEndpoint: string | null | undefined): { host: string; port: string } | null {
  if (!apiEndpoint) return null;
  try {
    const url = new URL(apiEndpoint);
    if (url.protocol !== 'mqtt:' && url.protocol !== 'mqtts:') return null;
    return {
      host: url.hostname.replace(/^\[|\]$/g, ''),
      port: url.port || (url.protocol === 'mqtts:' ? '8883' : '1883'),
    };
  } catch {
    return null;
  }
}

/** POSIX shell quoting: plain words stay as they are, anything else goes in single quotes. */
export function shellQuote(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

const SAMPLES: Record<string, unknown> = { number: 21.5, integer: 1, boolean: true, string: 'test' };

/** A test message: the driver's target variables with a sample value each, else `{"value": 1}`. */
export function exampleMessage(variables: ReadonlyArray<{ key: string; type?: string }> = []): string {
  const entries = variables
    .filter((v) => !v.key.startsWith('_'))
    .map((v) => [v.key, SAMPLES[v.type ?? ''] ?? 1]);
  return JSON.stringify(entries.length ? Object.fromEntries(entries) : { value: 1 });
}

export interface PubLine {
  host: string;
  port: string;
  username: string;
  /** null: not known here (shown once at creation); the line carries a placeholder. */
  password: string | null;
  topic: string;
  message: string;
}

export const PASSWORD_PLACEHOLDER = '<password>';

/** The arguments of `mosquitto_pub` (QoS 1: it returns once the server stored the packet). */
export function mosquittoPubArgs(line: PubLine): string[] {
  return [
    ...['-h', line.host, '-p', line.port, '-u', line.username, '-P', line.password ?? PASSWORD_PLACEHOLDER],
    ...['-q', '1', '-t', line.topic, '-m', line.message],
  ];
}

export const mosquittoPubLine = (line: PubLine) =>
  ['mosquitto_pub', ...mosquittoPubArgs(line)].map(shellQuote).join(' ');
