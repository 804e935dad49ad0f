import type { DriverRef } from '../../ingest/driver-parsing.js';
import type { ParserPlugin } from '../parser.types.js';
import { binaryParser } from './binary.parser.js';
import { cborParser } from './cbor.parser.js';
import { javascriptParser } from './javascript.parser.js';
import { jsonParser } from './json.parser.js';

/** Every parser plugin by `parser.type`. A new parser is one file and one line here. */
const PLUGINS: ReadonlyMap<string, ParserPlugin> = new Map(
  [jsonParser, cborParser, binaryParser, javascriptParser].map((plugin) => [plugin.type, plugin]),
);

export const DEFAULT_PARSER_TYPE = 'json';

export const PARSER_TYPES: readonly string[] = [...PLUGINS.keys()];

/** The plugin for a parser type, or undefined for a type nobody registered. */
export const parserFor = (type: string): ParserPlugin | undefined => PLUGINS.get(type);

/**
 * Whether packets of a device with this driver are parsed for the live view as they arrive, on the
 * main thread (ingest/visible.stage.ts): not when its parser runs user code. The ingest worker shows
 * the others after their commit, by the same rule.
 */
export const parsedOnArrival = (driver: DriverRef | null): boolean =>
  !driver || !parserFor(driver.parser.type)?.runsUserCode;
