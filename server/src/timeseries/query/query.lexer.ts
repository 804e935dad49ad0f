import type { DurationUnit } from './query.ast.js';
import { querySyntaxError } from './query.errors.js';

export type TokenKind = 'ident' | 'quotedIdent' | 'string' | 'number' | 'duration' | 'punct' | 'eof';

export interface Token {
  kind: TokenKind;
  /** Identifier or punctuation as written; string and quoted-identifier contents unescaped. */
  text: string;
  pos: number;
  /** Numbers and duration amounts. */
  number?: number;
  unit?: DurationUnit;
}

/** Longest first, so `<=` wins over `<`. */
const PUNCTUATION = ['!=', '<>', '<=', '>=', '(', ')', ',', '.', '*', '+', '-', '=', '<', '>'];
const DURATION_UNITS = new Set<string>(['s', 'm', 'h', 'd', 'w']);
/** Characters people paste from word processors or SQL consoles, with what to write instead. */
const HINTS: Record<string, string> = {
  '\u2018': "curly quote: use a straight single quote (')",
  '\u2019': "curly quote: use a straight single quote (')",
  '\u201C': 'curly quote: use a straight double quote (")',
  '\u201D': 'curly quote: use a straight double quote (")',
  ';': 'a query is a single statement; ";" is not part of the language',
  '/': 'comments and division are not part of the language',
  '`': 'backticks are not quotes here: use \'…\' for text and "…" for names',
};
export const MAX_NAME_LENGTH = 200;

const isIdentStart = (c: string) => /[A-Za-z_]/.test(c);
const isIdentPart = (c: string) => /[A-Za-z0-9_]/.test(c);
const isDigit = (c: string) => c >= '0' && c <= '9';

/**
 * Splits query text into tokens. Only ASCII letters, digits and the punctuation above are
 * language; anything else outside quotes is a syntax error with its position. There are no
 * comments, so `--` and `/*` cannot hide the rest of a query.
 */
export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    const start = i;
    if (isIdentStart(c)) {
      while (i < text.length && isIdentPart(text[i]!)) i++;
      tokens.push({ kind: 'ident', text: text.slice(start, i), pos: start });
      continue;
    }
    if (isDigit(c)) {
      i = readNumber(text, start, tokens);
      continue;
    }
    if (c === "'" || c === '"') {
      const { value, end } = readQuoted(text, start, c);
      if (c === '"' && (value.length === 0 || value.length > MAX_NAME_LENGTH))
        throw querySyntaxError(text, start, `A quoted name must have 1 to ${MAX_NAME_LENGTH} characters`);
      tokens.push({ kind: c === "'" ? 'string' : 'quotedIdent', text: value, pos: start });
      i = end;
      continue;
    }
    const punct = PUNCTUATION.find((p) => text.startsWith(p, i));
    if (punct) {
      tokens.push({ kind: 'punct', text: punct, pos: start });
      i += punct.length;
      continue;
    }
    const char = String.fromCodePoint(text.codePointAt(i)!);
    const hint = HINTS[char];
    throw querySyntaxError(
      text,
      start,
      `Unexpected character ${JSON.stringify(char)}${hint ? ` (${hint})` : ''}`,
      [],
      char,
    );
  }
  tokens.push({ kind: 'eof', text: '', pos: text.length });
  return tokens;
}

/** A number, or a duration when a unit letter follows directly (`30d`, `15m`). */
function readNumber(text: string, start: number, tokens: Token[]): number {
  let i = start;
  while (i < text.length && isDigit(text[i]!)) i++;
  if (text[i] === '.' && isDigit(text[i + 1] ?? '')) {
    i++;
    while (i < text.length && isDigit(text[i]!)) i++;
  }
  if ((text[i] === 'e' || text[i] === 'E') && /^[eE][+-]?\d/.test(text.slice(i, i + 3))) {
    i++;
    if (text[i] === '+' || text[i] === '-') i++;
    while (i < text.length && isDigit(text[i]!)) i++;
  }
  const literal = text.slice(start, i);
  const value = Number(literal);
  if (!Number.isFinite(value)) throw querySyntaxError(text, start, `Number ${literal} is out of range`);
  if (i < text.length && isIdentStart(text[i]!)) {
    let end = i;
    while (end < text.length && isIdentPart(text[end]!)) end++;
    const unit = text.slice(i, end);
    if (!DURATION_UNITS.has(unit))
      throw querySyntaxError(text, i, `Unknown duration unit "${unit}"`, ['s', 'm', 'h', 'd', 'w'], unit);
    if (!/^\d+$/.test(literal) || value < 1 || value > 100_000)
      throw querySyntaxError(text, start, 'A duration is a whole number from 1 to 100000 with a unit');
    tokens.push({
      kind: 'duration',
      text: text.slice(start, end),
      pos: start,
      number: value,
      unit: unit as DurationUnit,
    });
    return end;
  }
  tokens.push({ kind: 'number', text: literal, pos: start, number: value });
  return i;
}

/** `'it''s'` → `it's`: the quote character doubled inside is the only escape. */
function readQuoted(text: string, start: number, quote: string): { value: string; end: number } {
  let value = '';
  let i = start + 1;
  for (;;) {
    const next = text.indexOf(quote, i);
    if (next < 0) throw querySyntaxError(text, start, 'Unterminated quoted text', [quote]);
    value += text.slice(i, next);
    if (text[next + 1] === quote) {
      value += quote;
      i = next + 2;
      continue;
    }
    return { value, end: next + 1 };
  }
}
