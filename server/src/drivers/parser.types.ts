/**
 * A parser plugin turns a packet's bytes into named values. Plugins register in
 * `drivers/parsers/index.ts`; adding one never touches a switch elsewhere.
 */

export type ParsedValues = Record<string, unknown>;

export interface ParserPlugin {
  /** The `parser.type` of a driver: `json`, `cbor`, `binary`, `javascript`. */
  type: string;
  /** Problems with a driver's parser settings, as `{ path, message }`; empty when valid. */
  validate(config: Record<string, unknown>): Array<{ path: string; message: string }>;
  /** Parses one payload; throws ParseError with a message a user can act on. */
  parse(payload: Buffer, config: Record<string, unknown>): Promise<ParsedValues | ParsedValues[]>;
}

export class ParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ParseError';
  }
}
