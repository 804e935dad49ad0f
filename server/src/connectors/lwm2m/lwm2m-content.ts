import { Decoder } from 'cbor-x';
import { errors } from '../../platform/errors.js';
import { decodeTlv } from './lwm2m-tlv.js';

/**
 * LwM2M payloads into flat `{ "3303/0/5700": 21.5 }` values: SenML JSON and CBOR (RFC 8428, the
 * LwM2M 1.1 formats), OMA TLV, the OMA JSON of LwM2M 1.0, plain text and opaque. Every failure is
 * an `INVALID_PAYLOAD` AppError whose message a tenant may read (it goes to the connector log).
 */

/** A value as it becomes a device state; opaque bytes are written as hex. */
export type Lwm2mValue = string | number | boolean;
export type Lwm2mValues = Record<string, Lwm2mValue>;

/** LwM2M content formats by their CoAP Content-Format number. */
export const FORMAT = {
  text: 0,
  opaque: 42,
  senmlJson: 110,
  senmlCbor: 112,
  tlv: 11542,
  omaJson: 11543,
} as const;

const FORMAT_NAMES: Record<string, number> = {
  'text/plain': FORMAT.text,
  'application/octet-stream': FORMAT.opaque,
  'application/senml+json': FORMAT.senmlJson,
  'application/senml+cbor': FORMAT.senmlCbor,
  'application/vnd.oma.lwm2m+tlv': FORMAT.tlv,
  'application/vnd.oma.lwm2m+json': FORMAT.omaJson,
};

/** Short names for `_meta.format` and log lines. */
export const FORMAT_LABEL: Record<number, string> = {
  [FORMAT.text]: 'text',
  [FORMAT.opaque]: 'opaque',
  [FORMAT.senmlJson]: 'senml+json',
  [FORMAT.senmlCbor]: 'senml+cbor',
  [FORMAT.tlv]: 'tlv',
  [FORMAT.omaJson]: 'lwm2m+json',
};

/** Values one payload yields at most; a device that sends more is refused, not truncated silently. */
export const MAX_VALUES = 500;
export const MAX_PAYLOAD_BYTES = 64 * 1024;
const MAX_STRING = 10_000;

export const invalid = (message: string) => errors.unprocessable('INVALID_PAYLOAD', message);

/** The Content-Format option as the coap package gives it (a name, a number, or nothing) as a number. */
export function formatNumber(option: unknown): number | undefined {
  if (typeof option === 'number') return option;
  if (typeof option === 'string') return FORMAT_NAMES[option.split(';')[0]!.trim()];
  return undefined;
}

/** `/3303/0/5700`, `3303/0/5700/` → `3303/0/5700`; undefined unless 1 to 4 ids of 0..65535. */
export function normalisePath(text: string): string | undefined {
  const parts = text.replace(/^\/+|\/+$/g, '').split('/');
  if (parts.length < 1 || parts.length > 4) return undefined;
  for (const part of parts) if (!/^\d{1,5}$/.test(part) || Number(part) > 65535) return undefined;
  return parts.map(Number).join('/');
}

function put(values: Lwm2mValues, path: string, value: Lwm2mValue): void {
  if (!(path in values) && Object.keys(values).length >= MAX_VALUES)
    throw invalid(`More than ${MAX_VALUES} values in one payload`);
  values[path] = typeof value === 'string' ? value.slice(0, MAX_STRING) : value;
}

/** Plain text of one resource: a number when it reads as one, otherwise the text. */
function plainValue(text: string): Lwm2mValue {
  const trimmed = text.trim();
  if (/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(trimmed)) {
    const n = Number(trimmed);
    if (Number.isFinite(n)) return n;
  }
  return text;
}

function resourcePath(path: string | undefined, format: string): string {
  if (!path || path.split('/').length < 3)
    throw invalid(`A ${format} payload needs the path of one resource, not "${path ?? ''}"`);
  return path;
}

/** One SenML record's value: v, vs, vb, vd (base64url, kept as hex) or vlo (an object link). */
function senmlValue(record: ReadonlyMap<string, unknown>): Lwm2mValue | undefined {
  const v = record.get('v');
  if (v !== undefined) {
    if (typeof v !== 'number' || !Number.isFinite(v)) throw invalid('SenML "v" must be a finite number');
    return v;
  }
  const vs = record.get('vs');
  if (vs !== undefined) {
    if (typeof vs !== 'string') throw invalid('SenML "vs" must be a string');
    return vs;
  }
  const vb = record.get('vb');
  if (vb !== undefined) {
    if (typeof vb !== 'boolean') throw invalid('SenML "vb" must be true or false');
    return vb;
  }
  const vd = record.get('vd');
  if (vd !== undefined) {
    if (typeof vd === 'string') return Buffer.from(vd, 'base64url').toString('hex');
    if (vd instanceof Uint8Array) return Buffer.from(vd).toString('hex');
    throw invalid('SenML "vd" must be base64 data');
  }
  const vlo = record.get('vlo');
  if (vlo !== undefined) {
    if (typeof vlo !== 'string') throw invalid('SenML "vlo" must be an object link "objectId:instanceId"');
    return vlo;
  }
  return undefined;
}

/** SenML records (labels already named): base name + name is the path; records without value are skipped. */
function senml(records: unknown, requested: string | undefined): Lwm2mValues {
  if (!Array.isArray(records)) throw invalid('A SenML payload must be an array of records');
  if (records.length > MAX_VALUES) throw invalid(`More than ${MAX_VALUES} SenML records`);
  const values: Lwm2mValues = {};
  let baseName = '';
  for (const raw of records) {
    const record = labelled(raw);
    const bn = record.get('bn');
    if (bn !== undefined) {
      if (typeof bn !== 'string') throw invalid('SenML "bn" must be a string');
      baseName = bn;
    }
    const n = record.get('n');
    if (n !== undefined && typeof n !== 'string') throw invalid('SenML "n" must be a string');
    const name = baseName + (n ?? '');
    const path = name === '' ? requested : normalisePath(name);
    if (!path) throw invalid(`SenML name "${name.slice(0, 100)}" is not an LwM2M path`);
    const value = senmlValue(record);
    if (value !== undefined) put(values, path, value);
  }
  return values;
}

/** SenML CBOR labels (RFC 8428 table 6) by number; text labels pass as they are. */
const CBOR_LABELS = new Map<number, string>([
  [-2, 'bn'],
  [-3, 'bt'],
  [-4, 'bu'],
  [-5, 'bv'],
  [-1, 'bver'],
  [0, 'n'],
  [1, 'u'],
  [2, 'v'],
  [3, 'vs'],
  [4, 'vb'],
  [8, 'vd'],
  [5, 's'],
  [6, 't'],
  [7, 'ut'],
]);

function labelled(raw: unknown): Map<string, unknown> {
  const entries: Array<[unknown, unknown]> =
    raw instanceof Map
      ? [...(raw as Map<unknown, unknown>).entries()]
      : typeof raw === 'object' && raw !== null && !Array.isArray(raw)
        ? Object.entries(raw)
        : [];
  if (entries.length === 0 && !(raw instanceof Map) && (typeof raw !== 'object' || raw === null))
    throw invalid('A SenML record must be a map');
  const out = new Map<string, unknown>();
  for (const [key, value] of entries) {
    const label = typeof key === 'number' ? CBOR_LABELS.get(key) : typeof key === 'string' ? key : undefined;
    if (label !== undefined) out.set(label, value);
  }
  return out;
}

// Maps stay Maps: SenML CBOR labels are integers; records (a cbor-x extension) are not LwM2M.
const cbor = new Decoder({ mapsAsObjects: false, useRecords: false });

function parseJson(payload: Buffer, what: string): unknown {
  try {
    return JSON.parse(payload.toString('utf8'));
  } catch {
    throw invalid(`The ${what} payload is not valid JSON`);
  }
}

/** OMA LwM2M JSON (1.0): `{ "bn": "/3303/0/", "e": [{ "n": "5700", "v": 21.5 }] }`. */
function omaJson(doc: unknown, requested: string | undefined): Lwm2mValues {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw invalid('An LwM2M JSON payload must be an object');
  const { bn, e } = doc as { bn?: unknown; e?: unknown };
  if (bn !== undefined && typeof bn !== 'string') throw invalid('LwM2M JSON "bn" must be a string');
  if (!Array.isArray(e)) throw invalid('LwM2M JSON needs an "e" array');
  const base = bn ?? (requested ? `/${requested}/` : '');
  const records = e.map((item) => {
    if (typeof item !== 'object' || item === null || Array.isArray(item))
      throw invalid('LwM2M JSON entries must be objects');
    const { n, v, sv, bv, ov } = item as Record<string, unknown>;
    return {
      n,
      ...(v !== undefined ? { v } : {}),
      ...(sv !== undefined ? { vs: sv } : {}),
      ...(bv !== undefined ? { vb: bv } : {}),
      ...(ov !== undefined ? { vlo: ov } : {}),
    };
  });
  return senml([{ bn: base }, ...records], requested);
}

/**
 * Decodes one payload. `requested` is the path the request or observation named (`3303/0/5700`),
 * which plain text, opaque and TLV payloads are relative to.
 */
export function decodeLwm2m(payload: Buffer, format: number | undefined, requested?: string): Lwm2mValues {
  if (payload.length > MAX_PAYLOAD_BYTES)
    throw invalid(`A payload of ${payload.length} bytes is more than ${MAX_PAYLOAD_BYTES}`);
  switch (format ?? FORMAT.text) {
    case FORMAT.text: {
      const text = payload.toString('utf8');
      if (text.includes('\uFFFD')) throw invalid('A plain-text payload must be UTF-8');
      return { [resourcePath(requested, 'plain-text')]: plainValue(text) };
    }
    case FORMAT.opaque:
      return { [resourcePath(requested, 'opaque')]: payload.toString('hex') };
    case FORMAT.senmlJson:
      return senml(parseJson(payload, 'SenML JSON'), requested);
    case FORMAT.senmlCbor: {
      let records: unknown;
      try {
        records = cbor.decode(payload);
      } catch {
        throw invalid('The SenML CBOR payload is not valid CBOR');
      }
      return senml(records, requested);
    }
    case FORMAT.omaJson:
      return omaJson(parseJson(payload, 'LwM2M JSON'), requested);
    case FORMAT.tlv: {
      const values: Lwm2mValues = {};
      for (const [path, value] of decodeTlv(payload, requested ?? '')) put(values, path, value);
      return values;
    }
    default:
      throw invalid(`Content-Format ${format} is not an LwM2M format this server reads`);
  }
}
