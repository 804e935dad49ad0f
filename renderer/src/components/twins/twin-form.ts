import type { Body } from '../../api/generated';
import { coordinateNumber, coordinateProblem, type CoordinateProblem } from '../../lib/twins/location-picker';
import { addressDraftOf, addressOf, type AddressDraft } from '../../lib/twins/twin-address';
import type { Twin } from '../../lib/twins/twin-api';

export interface PropertyRow {
  id: number;
  key: string;
  value: string;
}

export type TwinBody = Body<'POST /xapi/v1/digital-twins'>;

/** The form's text fields; numbers stay text until saved, so a half-typed value is not lost. */
export interface TwinDraft {
  title: string;
  description: string;
  parentId: string;
  referenceId: string;
  tags: string;
  address: AddressDraft['address'];
  /** Address lines the form does not show (district, building …), sent back unchanged. */
  otherAddressLines: AddressDraft['otherAddressLines'];
  latitude: string;
  longitude: string;
  status: 'active' | 'inactive';
  /** A dashboard of the twin's account, or empty. */
  dashboardId: string;
  properties: PropertyRow[];
}

export function draftOf(twin?: Twin, parentId = ''): TwinDraft {
  const { address, otherAddressLines } = addressDraftOf(twin?.address ?? null);
  return {
    title: twin?.title ?? '',
    description: twin?.description ?? '',
    parentId: twin ? (twin.parentId ?? '') : parentId,
    referenceId: twin?.referenceId ?? '',
    tags: twin?.tags.join(', ') ?? '',
    address,
    otherAddressLines,
    latitude: twin?.latitude === null || twin?.latitude === undefined ? '' : String(twin.latitude),
    longitude: twin?.longitude === null || twin?.longitude === undefined ? '' : String(twin.longitude),
    status: twin?.status === 'inactive' ? 'inactive' : 'active',
    dashboardId: twin?.dashboardId ?? '',
    properties: Object.entries(twin?.customProperties ?? {}).map(([key, value], id) => ({ id, key, value })),
  };
}

export const splitTags = (text: string) => [
  ...new Set(
    text
      .split(',')
      .map((tag) => tag.trim())
      .filter(Boolean),
  ),
];

const toNumber = coordinateNumber;

export interface DraftProblems {
  latitude?: CoordinateProblem | 'together';
  longitude?: CoordinateProblem;
}

/** Problems the form can see itself; the server checks the rest and its message is shown. */
export function draftProblems(draft: TwinDraft): DraftProblems {
  const problems: DraftProblems = {};
  const latitude = coordinateProblem(draft.latitude, 'latitude');
  const longitude = coordinateProblem(draft.longitude, 'longitude');
  if (latitude) problems.latitude = latitude;
  if (longitude) problems.longitude = longitude;
  if (!latitude && !longitude && (toNumber(draft.latitude) === null) !== (toNumber(draft.longitude) === null))
    problems.latitude = 'together';
  return problems;
}

export function bodyOf(draft: TwinDraft): TwinBody {
  const customProperties: Record<string, string> = {};
  for (const row of draft.properties) if (row.key.trim()) customProperties[row.key.trim()] = row.value;
  return {
    title: draft.title.trim(),
    description: draft.description,
    parentId: draft.parentId || null,
    referenceId: draft.referenceId.trim() || null,
    tags: splitTags(draft.tags),
    address: addressOf(draft),
    latitude: toNumber(draft.latitude),
    longitude: toNumber(draft.longitude),
    status: draft.status,
    dashboardId: draft.dashboardId || null,
    customProperties,
  };
}

/** Only what changed, for the partial PUT (latitude and longitude travel together). */
export function changesOf(twin: Twin, body: TwinBody): Partial<TwinBody> {
  const changes: Record<string, unknown> = {};
  const before = bodyOf(draftOf(twin)) as Record<string, unknown>;
  for (const [key, value] of Object.entries(body)) {
    if (JSON.stringify(value) !== JSON.stringify(before[key])) changes[key] = value;
  }
  if ('latitude' in changes || 'longitude' in changes) {
    changes.latitude = body.latitude;
    changes.longitude = body.longitude;
  }
  return changes;
}
