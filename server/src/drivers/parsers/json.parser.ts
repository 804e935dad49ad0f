import { ParseError, type ParserPlugin } from '../parser.types.js';
import { toValues } from './values.js';

/** The default parser: a JSON object, or an array of at most 50 objects. No settings. */
export const jsonParser: ParserPlugin = {
  type: 'json',
  validate: () => [],
  parse: async (payload) => {
    let decoded: unknown;
    try {
      decoded = JSON.parse(payload.toString('utf8').replace(/^\uFEFF/, ''));
    } catch (error) {
      throw new ParseError(`Payload is not valid JSON: ${(error as Error).message}`);
    }
    return toValues(decoded, 'JSON payload');
  },
};
