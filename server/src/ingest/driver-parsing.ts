import type { ParserConfig, TargetVariable } from '../drivers/device-driver.entity.js';
import { ParseError, type ParsedValues } from '../drivers/parser.types.js';

/** What the pipeline knows of a device's driver: enough to parse, cached with the device. */
export interface DriverRef {
  id: string;
  /** Compiled parsers are cached per driver id and this time. */
  updatedAt: Date;
  parser: ParserConfig;
  targetVariables: TargetVariable[];
}

/** Parses a payload with a driver's parser; the drivers domain provides the real one (all parser plugins). */
export interface DriverParsing {
  parse(driver: DriverRef, payload: Buffer): Promise<ParsedValues | ParsedValues[]>;
}

/**
 * Stand-in used until the drivers domain registers its parser plugins: JSON only, whatever the
 * driver says, so the pipeline and its tests run end to end without that domain.
 */
export const jsonOnlyParsing: DriverParsing = {
  async parse(_driver, payload) {
    let value: unknown;
    try {
      value = JSON.parse(payload.toString('utf8'));
    } catch (error) {
      throw new ParseError(`Payload is not valid JSON: ${(error as Error).message}`);
    }
    const isObject = (v: unknown): v is ParsedValues =>
      typeof v === 'object' && v !== null && !Array.isArray(v);
    if (isObject(value)) return value;
    if (Array.isArray(value) && value.every(isObject)) return value;
    throw new ParseError('Payload must be a JSON object or an array of JSON objects');
  },
};
