/** `one|other` texts: the first part for a count of 1, else the second; `{count}` is filled in. */
export function countText(text: string, count: number): string {
  const [one, other] = text.split('|');
  return ((count === 1 ? one : other) ?? one ?? '').replace('{count}', String(count));
}
