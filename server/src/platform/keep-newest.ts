/**
 * Sets `key` in `map` as its newest entry (a Map iterates in insertion order) and drops the oldest
 * while it holds more than `max`: a memory of recent answers with a bound.
 */
export function keepNewest<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  while (map.size > max) map.delete(map.keys().next().value!);
}
