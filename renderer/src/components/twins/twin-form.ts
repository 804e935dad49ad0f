import type { Body } from '../../api/generated';
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
  latitude: string;
  longitude: string;
  status: 'active' | 'inactive';
  /** A dashboard of the twin's account, or empty. */
  dashboardId: string;
  properties: PropertyRow[];
}

export function draftOf(twin?: Twin, parentId = ''): TwinDraft {
  return {
    title: twin?.title ?? '',
    description: twin?.description ?? '',
    parentId: twin ? (twin.parentId ?? '') : parentId,
    referenceId: twin?.referenceId ?? '',
    tags: twin?.tags.join(', ') ?? '',
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

const toNumber = (text: string) => (text.trim() === '' ? null : Number(text.replace(',', '.')));

/** Problems the form can see itself; the server checks the rest and its message is shown. */
export function draftProblems(draft: TwinDraft): { latitude?: 'number' | 'together'; longitude?: 'number' } {
  const latitude = toNumber(draft.latitude);
  const longitude = toNumber(draft.longitude);
  if (latitude !== null && Number.isNaN(latitude)) return { latitude: 'number' };
  if (longitude !== null && Number.isNaN(longitude)) return { longitude: 'number' };
  if ((latitude === null) !== (longitude === null)) return { latitude: 'together' };
  return {};
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
