/** One line of the meta-info editor; `kept` holds a structured value that the editor shows but keeps. */
export interface MetaRow {
  key: string;
  value: string;
  kept?: unknown;
}

export function metaRowsOf(metaInfo: Record<string, unknown>): MetaRow[] {
  return Object.entries(metaInfo).map(([key, value]) =>
    typeof value === 'string' ? { key, value } : { key, value: JSON.stringify(value), kept: value },
  );
}

/**
 * The account's meta info from the editor's lines: keys trimmed, lines without a key dropped,
 * structured values as they were. A key used twice is refused (the last would silently win).
 */
export function metaInfoOf(
  rows: readonly MetaRow[],
): { metaInfo: Record<string, unknown> } | { duplicate: string } {
  const metaInfo: Record<string, unknown> = {};
  for (const row of rows) {
    const key = row.key.trim();
    if (!key) continue;
    if (Object.hasOwn(metaInfo, key)) return { duplicate: key };
    metaInfo[key] = 'kept' in row ? row.kept : row.value;
  }
  return { metaInfo };
}
