import type { Body } from '../../api/generated';

export type BulkSet = Body<'POST /xapi/v1/virtual-devices/bulk-edit'>['set'];

/** Comma- or semicolon-separated labels, trimmed, without empties and repeats. */
export const splitLabels = (text: string): string[] => [
  ...new Set(
    text
      .split(/[,;]/)
      .map((label) => label.trim())
      .filter(Boolean),
  ),
];

interface Target {
  id: string;
  tags: string[];
  groups: string[];
}

/**
 * The bulk-edit calls for "add these tags/groups" on devices with different labels: the XAPI's
 * `set.tags` replaces, so devices that end with the same labels share one call. `common` is the
 * part of the change that is the same for all.
 */
export function bulkEditCalls(
  devices: readonly Target[],
  addTags: readonly string[],
  addGroups: readonly string[],
  common: BulkSet,
): { ids: string[]; set: BulkSet }[] {
  if (addTags.length === 0 && addGroups.length === 0) {
    return devices.length ? [{ ids: devices.map((d) => d.id), set: common }] : [];
  }
  const calls = new Map<string, { ids: string[]; set: BulkSet }>();
  for (const device of devices) {
    const set: BulkSet = { ...common };
    if (addTags.length) set.tags = [...new Set([...device.tags, ...addTags])];
    if (addGroups.length) set.groups = [...new Set([...device.groups, ...addGroups])];
    const key = JSON.stringify([set.tags, set.groups]);
    const call = calls.get(key);
    if (call) call.ids.push(device.id);
    else calls.set(key, { ids: [device.id], set });
  }
  return [...calls.values()];
}
