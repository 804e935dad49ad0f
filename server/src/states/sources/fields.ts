import { Type, type TLiteral, type TUnion } from 'typebox';

/** Schema building blocks shared by the state sources. */
export const Id = Type.String({ format: 'uuid' });
export const StateKey = Type.String({ minLength: 1, maxLength: 200 });

/** A choice of constants, typed as the union of its values. */
export const oneOf = <const T extends readonly string[]>(values: T) =>
  Type.Union(values.map((v) => Type.Literal(v))) as unknown as TUnion<{
    -readonly [K in keyof T]: TLiteral<T[K]>;
  }>;

/** Engine timers below a second would only burn CPU; above a day nobody waits for them. */
export const MAX_INTERVAL_SECONDS = 86_400;
/** A sliding window of at most a year over the stored series. */
export const MAX_WINDOW_SECONDS = 366 * 86_400;
export const MAX_AGGREGATED_STATES = 100;
export const Seconds = (max: number) => Type.Integer({ minimum: 1, maximum: max });
