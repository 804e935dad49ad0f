import { Type, type Static } from 'typebox';
import { problem } from '../../platform/http/problem-detail.js';
import { defineSource } from './state-source-kind.js';
import { MAX_INTERVAL_SECONDS, Seconds } from './fields.js';

const settings = Type.Object({
  type: Type.Literal('random'),
  min: Type.Number(),
  max: Type.Number(),
  intervalSeconds: Seconds(MAX_INTERVAL_SECONDS),
  decimals: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 10,
      description: 'Digits after the decimal point; 0 gives integers.',
    }),
  ),
});

/** A uniform random number in [min, max], drawn every interval (demos, tests, simulations). */
export type RandomSource = Static<typeof settings>;

export const randomSource = defineSource<RandomSource>({
  type: 'random',
  summary: 'A uniform random number in [min, max], drawn every interval.',
  settings,
  check: (source) =>
    source.min > source.max
      ? [problem('/source/min', 'maximum', { limit: source.max }, 'must not be greater than max')]
      : [],
  settable: false,
  compute: 'draw',
  form: [
    { key: 'min', widget: 'number' },
    { key: 'max', widget: 'number' },
    { key: 'intervalSeconds', widget: 'number' },
    { key: 'decimals', widget: 'number' },
  ],
});
