import type { Body, Reply } from '../../api/generated';

type Device = Reply<'GET /xapi/v1/virtual-devices/{id}'>;
export type DeviceBody = Body<'PUT /xapi/v1/virtual-devices/{id}'>;

/**
 * The device edit form as text fields: numbers, lists and JSON stay text until saved, so a
 * half-typed value is not lost. The device template and the health rules have their own panels.
 */
export interface DeviceDraft {
  device_id: string;
  title: string;
  description: string;
  connectorId: string;
  deviceDriverId: string;
  parentId: string;
  permissionScopeId: string;
  tags: string;
  groups: string;
  keyValueData: string;
  externalId: string;
  referenceId: string;
  targetReferenceId: string;
  operationalStatus: string;
  activationMethod: 'OTAA' | 'ABP';
  skipFrameCounterCheck: boolean;
  devEui: string;
  endDeviceId: string;
  /** Write-only: empty keeps the stored key. */
  applicationSessionKey: string;
  networkSessionKey: string;
}

export function deviceDraftOf(device: Device): DeviceDraft {
  return {
    device_id: device.device_id,
    title: device.title,
    description: device.description,
    connectorId: device.connectorId ?? '',
    deviceDriverId: device.deviceDriverId ?? '',
    parentId: device.parentId ?? '',
    permissionScopeId: device.permissionScopeId ?? '',
    tags: device.tags.join(', '),
    groups: device.groups.join(', '),
    keyValueData: Object.keys(device.keyValueData).length ? JSON.stringify(device.keyValueData, null, 2) : '',
    externalId: device.externalId ?? '',
    referenceId: device.referenceId ?? '',
    targetReferenceId: device.targetReferenceId ?? '',
    operationalStatus: device.operationalStatus === null ? '' : String(device.operationalStatus),
    activationMethod: device.activationMethod === 'ABP' ? 'ABP' : 'OTAA',
    skipFrameCounterCheck: device.skipFrameCounterCheck,
    devEui: device.devEui ?? '',
    endDeviceId: device.endDeviceId ?? '',
    applicationSessionKey: '',
    networkSessionKey: '',
  };
}

const list = (text: string) => [
  ...new Set(
    text
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean),
  ),
];

export type DraftProblem = 'keyValueData' | 'operationalStatus';

/** What the form sees itself before the server checks the rest (its message is shown then). */
export function deviceDraftProblems(draft: DeviceDraft): DraftProblem[] {
  const problems: DraftProblem[] = [];
  if (draft.keyValueData.trim()) {
    try {
      const value: unknown = JSON.parse(draft.keyValueData);
      if (typeof value !== 'object' || value === null || Array.isArray(value)) problems.push('keyValueData');
    } catch {
      problems.push('keyValueData');
    }
  }
  if (draft.operationalStatus.trim() && !/^-?\d+$/.test(draft.operationalStatus.trim()))
    problems.push('operationalStatus');
  return problems;
}

/** The whole device as the PUT takes it; call only when deviceDraftProblems found none. */
export function deviceBodyOf(draft: DeviceDraft): DeviceBody {
  const text = (value: string) => value.trim() || null;
  return {
    device_id: draft.device_id.trim(),
    title: draft.title.trim(),
    description: draft.description,
    connectorId: draft.connectorId || null,
    deviceDriverId: draft.deviceDriverId || null,
    parentId: draft.parentId || null,
    permissionScopeId: draft.permissionScopeId || null,
    tags: list(draft.tags),
    groups: list(draft.groups),
    keyValueData: draft.keyValueData.trim()
      ? (JSON.parse(draft.keyValueData) as DeviceBody['keyValueData'])
      : {},
    externalId: text(draft.externalId),
    referenceId: text(draft.referenceId),
    targetReferenceId: text(draft.targetReferenceId),
    operationalStatus: draft.operationalStatus.trim() ? Number(draft.operationalStatus.trim()) : null,
    activationMethod: draft.activationMethod,
    skipFrameCounterCheck: draft.skipFrameCounterCheck,
    devEui: text(draft.devEui),
    endDeviceId: text(draft.endDeviceId),
    ...(draft.applicationSessionKey.trim()
      ? { application_session_key: draft.applicationSessionKey.trim() }
      : {}),
    ...(draft.networkSessionKey.trim() ? { network_session_key: draft.networkSessionKey.trim() } : {}),
  };
}

/** Only what changed, so a PUT never rewrites fields another user changed meanwhile. */
export function deviceChanges(device: Device, body: DeviceBody): Partial<DeviceBody> {
  const before = deviceBodyOf(deviceDraftOf(device)) as Record<string, unknown>;
  const changes: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    if (JSON.stringify(value) !== JSON.stringify(before[key])) changes[key] = value;
  }
  return changes;
}
