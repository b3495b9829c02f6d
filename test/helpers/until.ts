/** The default bound of {@link until}: generous, for a busy CI machine (2 shared cores). */
export const untilTimeoutMs = 60_000;

/**
 * Waits (real time) until `probe` holds, checking it now and then every `intervalMs`; throws
 * naming `what` once `timeoutMs` have passed without it. A safety net for a test that would
 * otherwise hang, not a timing assertion: a test asserts on timing with its own clock.
 *
 * @param probe the condition; an async one is awaited before the next check.
 * @param what what is awaited, for the error (e.g. `'the driver runs'`).
 * @param timeoutMs how long to wait at the most, ms (default {@link untilTimeoutMs}, 60 s).
 * @param intervalMs the pause between two checks, ms (default 2: short, so a passing state is
 *   not missed; pass more for a costly probe such as an HTTP request).
 */
export async function until(
  probe: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = untilTimeoutMs,
  intervalMs = 2,
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await probe())) {
    if (performance.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
