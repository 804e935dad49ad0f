/**
 * The keys a twin state can name on a device: those it has sent (its device states, with their
 * current value) and those its driver declares (its target variables), sent or not, so a twin can be
 * set up before the device's first packet. A sent key the driver does not declare is offered too.
 */

export interface DeviceKey {
  key: string;
  /** The current value; undefined for a declared key the device has not sent yet. */
  value?: unknown;
  sent: boolean;
  /** The driver's type and unit for the key; null when it does not declare the key (or names no unit). */
  valueType: string | null;
  unit: string | null;
}

interface SentState {
  key: string;
  value: unknown;
}

interface DeclaredKey {
  key: string;
  valueType: string;
  unit: string | null;
}

// The driver's variables first, then the packet as parsed and as received, then metadata.
const rank = (key: string) => (key === '_parsed' ? 1 : key === '_raw' ? 2 : key.startsWith('_') ? 3 : 0);

export function deviceKeys(sent: readonly SentState[], declared: readonly DeclaredKey[]): DeviceKey[] {
  const byKey = new Map(declared.map((d) => [d.key, d]));
  const keys: DeviceKey[] = sent.map(({ key, value }) => ({
    key,
    value,
    sent: true,
    valueType: byKey.get(key)?.valueType ?? null,
    unit: byKey.get(key)?.unit ?? null,
  }));
  const seen = new Set(sent.map((s) => s.key));
  for (const d of declared)
    if (!seen.has(d.key)) keys.push({ key: d.key, sent: false, valueType: d.valueType, unit: d.unit });
  return keys.sort((a, b) => rank(a.key) - rank(b.key) || a.key.localeCompare(b.key));
}
