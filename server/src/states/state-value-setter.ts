/**
 * What the states API needs from the state engine (states/engine/): setting a value the way ingest
 * does (dependent aggregates recomputed, a time-series point written, live listeners told), and
 * telling it that state definitions changed so it reloads its routing index.
 */
export interface SetValueOptions {
  /** Leave a value at `time` or later alone (a start value read before a packet arrived). */
  unlessNewer?: boolean;
}

export interface StateValueSetter {
  /**
   * Sets a state's value at `time`. A value equal to the current one changes nothing (no new
   * timestamp, no point): `changed` is false.
   */
  setValue(
    stateId: string,
    value: unknown,
    time: Date,
    options?: SetValueOptions,
  ): Promise<{ changed: boolean }>;
  /** A state was created, changed or deleted (or a twin's referenceId changed). */
  definitionsChanged(twinId?: string): void;
}
