import type { ParserConfig, TargetVariable } from '../drivers/device-driver.entity.js';
import type { PacketMeta, ParsedValues } from '../drivers/parser.types.js';

/** What the pipeline knows of a device's driver: enough to parse, cached with the device. */
export interface DriverRef {
  id: string;
  /** Compiled parsers are cached per driver id and this time. */
  updatedAt: Date;
  parser: ParserConfig;
  targetVariables: TargetVariable[];
}

/**
 * Parses a payload with a driver's parser: one item for an object payload, up to 50 for an array.
 * The drivers domain's DriverParsing service (all parser plugins) is what the server passes in.
 */
export interface DriverParsing {
  parse(
    driver: DriverRef,
    payload: Buffer,
    meta?: PacketMeta,
  ): Promise<{
    values: ParsedValues[];
    /** A codec's `warnings`, kept on the packet. */
    codecWarnings?: string[];
    /** A codec's `errors`: the packet fails with them. */
    errors?: string[];
    /** The script's `console.*` lines. */
    logs?: string[];
  }>;
}
