/**
 * Whether a live change's time is at least the time of the value a read returned: then the live
 * value stands (the read was answered before the change but arrived after it). A value never set
 * (no timestamp) counts as oldest.
 */
export function isNotOlder(liveTimestamp: string, readTimestamp: string | null | undefined): boolean {
  return !readTimestamp || Date.parse(liveTimestamp) >= Date.parse(readTimestamp);
}
