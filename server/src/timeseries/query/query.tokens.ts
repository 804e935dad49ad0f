import { querySyntaxError } from './query.errors.js';
import { tokenize, type Token } from './query.lexer.js';

/** Walks the tokens of one query for the parser: look-ahead, keywords, punctuation, error reports. */
export class TokenCursor {
  private readonly tokens: Token[];
  private index = 0;

  constructor(protected readonly text: string) {
    this.tokens = tokenize(text);
  }

  protected peek(ahead = 0): Token {
    return this.tokens[Math.min(this.index + ahead, this.tokens.length - 1)]!;
  }

  protected next(): Token {
    const token = this.peek();
    if (token.kind !== 'eof') this.index++;
    return token;
  }

  protected peekKeyword(word: string): boolean {
    const token = this.peek();
    return token.kind === 'ident' && token.text.toUpperCase() === word;
  }

  protected acceptKeyword(word: string): boolean {
    if (!this.peekKeyword(word)) return false;
    this.next();
    return true;
  }

  protected expectKeyword(word: string): void {
    if (!this.acceptKeyword(word)) throw this.unexpected([word]);
  }

  protected acceptPunct(text: string): boolean {
    const token = this.peek();
    if (token.kind !== 'punct' || token.text !== text) return false;
    this.next();
    return true;
  }

  protected expectPunct(text: string): void {
    if (!this.acceptPunct(text)) throw this.unexpected([text]);
  }

  protected unexpected(expected: string[]) {
    const token = this.peek();
    const found = token.kind === 'eof' ? 'end of query' : describe(token);
    return querySyntaxError(this.text, token.pos, `Unexpected ${found}`, expected, found);
  }
}

function describe(token: Token): string {
  const shown = token.text.length > 40 ? `${token.text.slice(0, 40)}…` : token.text;
  if (token.kind === 'string') return `text '${shown}'`;
  if (token.kind === 'quotedIdent') return `name "${shown}"`;
  return `"${shown}"`;
}
