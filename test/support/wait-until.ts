/**
 * Polls `check` until it returns a value other than undefined/false, or throws after `timeoutMs`
 * with `what` in the message. The synchronisation primitive of the tests: never a bare sleep.
 */
export async function waitUntil<T>(what: string, check: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 10_000, intervalMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value as T;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
