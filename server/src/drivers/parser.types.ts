import type { CheckProblem } from '../platform/http/problem-detail.js';

/**
 * A parser plugin turns a packet's bytes into named values. Plugins register in
 * `drivers/parsers/index.ts`; adding one never touches a switch elsewhere.
 */

export type ParsedValues = Record<string, unknown>;

/** What the ingest path knows about a packet (device key, connector, time); JSON values only. */
export type PacketMeta = Record<string, unknown>;

/** A problem with a parser's settings, named by its path under `/parser` (problem-detail.ts). */
export type ConfigProblem = CheckProblem;

/** What a parser made of one payload, with what a codec reported about it. */
export interface Decoded {
  values: ParsedValues | ParsedValues[];
  /** A codec's `warnings`: the payload decoded, with remarks kept on the packet. */
  warnings?: string[];
  /** A codec's `errors`: the payload did not decode and the packet fails with them (values are empty). */
  errors?: string[];
  /** What the script wrote with `console.*`. */
  logs?: string[];
}

/** A codec's `encodeDownlink` result (LoRa Alliance TS013). */
export interface EncodedDownlink {
  bytes: number[];
  fPort: number | null;
  warnings: string[];
  errors: string[];
  logs: string[];
}

/** A parser prepared once for one configuration (layout checked, sandbox loaded) and reused. */
export interface CompiledParser {
  parse(payload: Buffer, meta?: PacketMeta): Promise<ParsedValues | ParsedValues[]>;
  /** Like parse, with a codec's warnings and errors and the script's console lines. */
  decode?(payload: Buffer, meta?: PacketMeta): Promise<Decoded>;
  /** Present when the script defines `encodeDownlink(input)`: `data` → bytes for the device. */
  encodeDownlink?(data: unknown, meta?: PacketMeta): Promise<EncodedDownlink>;
  /** Present when the script defines `decodeDownlink(input)`: bytes sent to the device → `data`. */
  decodeDownlink?(payload: Buffer, meta?: PacketMeta): Promise<Decoded>;
  /** Frees what the parser holds (a sandbox runtime); the parser is not used afterwards. */
  dispose?(): void;
}

export interface ParserPlugin {
  /** The `parser.type` of a driver: `json`, `cbor`, `binary`, `javascript`. */
  type: string;
  /**
   * The parser runs the driver author's code (in a sandbox, up to its time limit): it never runs on
   * the broker's thread, so such packets are shown live after their commit (ADR 0104).
   */
  runsUserCode?: boolean;
  /** Problems with a driver's parser settings, as `{ path, message }`; empty when valid. */
  validate(config: Record<string, unknown>): ConfigProblem[];
  /** Parses one payload; throws ParseError with a message a user can act on. */
  parse(
    payload: Buffer,
    config: Record<string, unknown>,
    meta?: PacketMeta,
  ): Promise<ParsedValues | ParsedValues[]>;
  /**
   * Prepares a reusable parser for a validated config; plugins with costly set-up implement it.
   * Throws ParseError when the config cannot work (a script that does not compile).
   */
  compile?(config: Record<string, unknown>): Promise<CompiledParser>;
}

/** Codes a ParseError carries; the XAPI answers them as 422 with this code. */
export type ParseErrorCode =
  /** The payload does not fit the parser (bad JSON, offset beyond the payload, …). */
  | 'PARSE_ERROR'
  /** A user script threw or returned something unusable; the message is the script's. */
  | 'PARSER_ERROR'
  /** A user script ran longer than its time limit. */
  | 'PARSER_TIMEOUT'
  /** A user script needed more memory than its limit. */
  | 'PARSER_MEMORY_LIMIT';

export class ParseError extends Error {
  /** What the script wrote with `console.*` before it failed (empty after a time or memory limit). */
  logs: string[] = [];

  constructor(
    message: string,
    readonly code: ParseErrorCode = 'PARSE_ERROR',
  ) {
    super(message);
    this.name = 'ParseError';
  }
}
