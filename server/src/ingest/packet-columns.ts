import type { IncomingPacket } from './ingest.types.js';
import { metaText } from './spool/spool-record.js';

/**
 * The packet store's INSERT parameters, encoded by hand for speed (see packet-store.ts):
 * `[connectorIds, deviceKeys, receivedAtMs, payloads, offsets, lengths, sources, metas]`.
 * Array literals follow PostgreSQL's array input syntax: every text element double-quoted, with
 * backslash and double quote escaped; uuids need no quoting. Payloads travel as one Buffer (sent as
 * a binary parameter) and each row takes `substring(payloads FROM offset FOR length)` (1-based).
 * `metas` is a text array of JSON (NULL for a packet without metadata), or null when no packet of
 * the batch has any: unnest pads it with NULLs, so such batches pay nothing for the column.
 */
export function packetColumns(
  packets: readonly IncomingPacket[],
): [string, string, string, Buffer, string, string, string, string | null] {
  const connectors: string[] = [];
  const keys: string[] = [];
  const times: number[] = [];
  const offsets: number[] = [];
  const lengths: number[] = [];
  const sources: string[] = [];
  const payloads: Buffer[] = [];
  let offset = 1;
  let metas: string[] | undefined;
  for (let i = 0; i < packets.length; i++) {
    const p = packets[i]!;
    if (p.meta) (metas ??= new Array<string>(i).fill('NULL')).push(quote(metaText(p.meta)));
    else metas?.push('NULL');
    connectors.push(p.connectorId);
    keys.push(quote(p.deviceKey));
    times.push(p.receivedAt.getTime());
    offsets.push(offset);
    lengths.push(p.payload.length);
    offset += p.payload.length;
    sources.push(quote(p.source));
    payloads.push(p.payload);
  }
  return [
    `{${connectors.join(',')}}`,
    `{${keys.join(',')}}`,
    `{${times.join(',')}}`,
    Buffer.concat(payloads, offset - 1),
    `{${offsets.join(',')}}`,
    `{${lengths.join(',')}}`,
    `{${sources.join(',')}}`,
    metas ? `{${metas.join(',')}}` : null,
  ];
}

const SPECIAL = /[\\"]/g;

/** One element of a text array literal. */
export function quote(text: string): string {
  return `"${text.replace(SPECIAL, '\\$&')}"`;
}
