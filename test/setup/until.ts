/**
 * Polls `condition` until it holds, failing with `what` once `timeoutMs` has passed: a wait in a
 * test is bounded by its own deadline, and never outlives the test as a loop nobody awaits.
 */
export async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000, intervalMs = 20): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
