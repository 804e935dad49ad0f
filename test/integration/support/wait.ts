/**
 * Polls `check` until it returns something other than `undefined`; fails after `timeoutMs`,
 * naming `what`. The one bounded wait loop the integration tests use.
 */
export async function waitFor<T>(
  check: () => Promise<T | undefined>,
  timeoutMs = 10_000,
  { intervalMs = 50, what = 'condition' }: { intervalMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
