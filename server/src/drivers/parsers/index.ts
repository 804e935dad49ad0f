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
