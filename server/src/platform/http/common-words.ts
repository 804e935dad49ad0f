import { keepNewest } from '../keep-newest.js';
import { likePattern } from './list.js';
import type { Execute } from './list-sql.js';

/**
 * A text search through a trigram index (`pg_trgm`, GIN) that leaves the pattern's common words out
 * of what the index reads (docs/adr/0140-common-words-in-trigram-searches.md).
 *
 * The index answers `ILIKE '%meter 1234,%'` by intersecting the lists of rows holding each of the
 * pattern's trigrams. A word that nearly every row holds ("meter" in every meter's title) has lists
 * as long as the table: 17 ms of reading at a million devices, while "1234," alone finds its few
 * rows in 1.5 ms. The index is shared by all accounts, so this holds for a small account too.
 * So: the rows are found by the pattern's rarer words, and the whole pattern is checked on them, on
 * a copy of the expression the planner does not match to the index. Which words are common is
 * learnt from a sample of the table and kept for minutes; what is kept only changes the plan, never
 * the rows (the whole pattern is always checked).
 */

/** A word in at least this share of sampled rows is common. */
const COMMON_SHARE = 0.01;
/** Rows sampled to learn words; a table with fewer rows than this has short lists anyway. */
const SAMPLE_ROWS = 3000;
const WORDS_KEPT_MS = 10 * 60_000;
const WORDS_KEPT = 2000;

/** A table's trigram-indexed text: the table, an alias, the expression on that alias as indexed. */
export interface IndexedText {
  table: string;
  alias: string;
  expression: string;
}

const commonWords = new Map<string, { common: boolean; at: number }>();
const learning = new Map<string, Promise<void>>();
const wordKey = (table: string, word: string) => `${table}\u0000${word.toLowerCase()}`;

/** A word of a search text (lower case) and the part of the text the index reads for it. */
interface Word {
  word: string;
  fragment: string;
}

/**
 * The words of `text` that the index could read on their own: split at white space, each once, with
 * three letters or digits in a row. pg_trgm makes trigrams of letters and digits only: a pattern
 * without any (`---`, `1_3`) would make the index read all of itself. A word's fragment is the word
 * with the white space around it in the text: part of the text as well, and the index then also
 * reads where the word starts and ends (" 1234" finds "meter 1234" but not "meter 51234").
 */
function wordsOf(text: string): Word[] {
  const words = new Map<string, Word>();
  for (const match of text.matchAll(/\S+/g)) {
    const word = match[0].toLowerCase();
    if (!/[\p{L}\p{N}]{3}/u.test(word) || words.has(word)) continue;
    const start = Math.max(0, match.index - 1);
    words.set(word, { word, fragment: text.slice(start, match.index + match[0].length + 1) });
  }
  return [...words.values()];
}

/**
 * Learns which words of these search texts are common in `indexed.table`, sampling the words not
 * known yet (one statement for all of them). A text of one word needs nothing learnt.
 */
export async function learnCommonWords(
  execute: Execute,
  indexed: IndexedText,
  texts: string[],
): Promise<void> {
  const now = performance.now();
  const unknown = [
    ...new Set(
      texts
        .map(wordsOf)
        .filter((words) => words.length > 1)
        .flat()
        .map(({ word }) => word),
    ),
  ].filter((word) => {
    const kept = commonWords.get(wordKey(indexed.table, word));
    return !kept || now - kept.at > WORDS_KEPT_MS;
  });
  if (unknown.length === 0) return;
  const key = `${indexed.table}\u0000${unknown.join('\u0000')}`;
  const pending =
    learning.get(key) ??
    sample(execute, indexed, unknown)
      // Not learnt, the words count as not common: the search reads the whole text, as without this.
      .catch(() => keep(indexed.table, unknown, () => false))
      .finally(() => learning.delete(key));
  learning.set(key, pending);
  await pending;
}

async function sample(execute: Execute, indexed: IndexedText, words: string[]): Promise<void> {
  const { table, alias, expression } = indexed;
  const sized = await execute<Array<{ rows: number }>>(
    'SELECT reltuples::float8 AS rows FROM pg_class WHERE oid = ?::regclass',
    [table],
  );
  const rows = Number(sized[0]?.rows ?? 0);
  if (rows < SAMPLE_ROWS) return keep(table, words, () => false);
  // SYSTEM sampling reads whole pages picked at random: a few dozen pages at a million rows.
  const percent = Math.min(100, (100 * SAMPLE_ROWS) / rows);
  const counts = words.map((_, i) => `count(*) FILTER (WHERE s.t ILIKE ?)::int AS w${i}`);
  const found = await execute<Array<Record<string, number>>>(
    `SELECT count(*)::int AS n, ${counts.join(', ')}
       FROM (SELECT ${expression} AS t FROM ${table} ${alias} TABLESAMPLE SYSTEM (${percent.toFixed(6)})) s`,
    words.map((w) => likePattern(w)),
  );
  const n = found[0]?.n ?? 0;
  keep(table, words, (i) => n > 0 && (found[0]?.[`w${i}`] ?? 0) / n >= COMMON_SHARE);
}

function keep(table: string, words: string[], common: (i: number) => boolean): void {
  const at = performance.now();
  words.forEach((word, i) =>
    keepNewest(commonWords, wordKey(table, word), { common: common(i), at }, WORDS_KEPT),
  );
}

/**
 * The LIKE patterns (of `likePattern`) the index should read to find the rows containing `text`:
 * the text itself, or, when some of its words are known to be common and others not, the others'
 * fragments. Every pattern is part of the text, so every row containing the text is found.
 */
export function indexPatterns(table: string, text: string): { patterns: string[]; narrowed: boolean } {
  const words = wordsOf(text);
  const rare = words.filter(({ word }) => commonWords.get(wordKey(table, word))?.common === false);
  if (words.length < 2 || rare.length === 0 || rare.length === words.length)
    return { patterns: [likePattern(text)], narrowed: false };
  return { patterns: rare.map(({ fragment }) => likePattern(fragment)), narrowed: true };
}

/**
 * `indexed.expression` contains `text`, ignoring case, as parameterised SQL: through the index by
 * the text's rarer words, then checked whole on a copy of the expression (`|| ''`) that the
 * planner does not match to the index (which would read the common words again).
 */
export function containsSql(indexed: IndexedText, text: string): { sql: string; params: string[] } {
  const { patterns, narrowed } = indexPatterns(indexed.table, text);
  const found = patterns.map(() => `${indexed.expression} ILIKE ?`);
  if (!narrowed) return { sql: found.join(' AND '), params: patterns };
  return {
    sql: [...found, `(${indexed.expression} || '') ILIKE ?`].join(' AND '),
    params: [...patterns, likePattern(text)],
  };
}
