import { expect, it } from 'vitest';

/**
 * Whether a tool the following tests need (Docker, bubblewrap, Bazel, a C compiler...) is available.
 * When it is not, a test named after the tool says why and how to get it: under CI (`CI=true`) that
 * test fails, so a missing tool can never pass as a green run; elsewhere it is reported as skipped.
 * Call it where the tests are declared (top level or in a describe) and skip them on `false`.
 */
export function needTool(tool: string, available: boolean, howToGet: string): boolean {
  if (available) return true;
  const name = `needs ${tool}: ${howToGet}`;
  if (process.env['CI'] === 'true') it(name, () => expect.fail(`${tool} is missing under CI: ${howToGet}`));
  else it.skip(name, () => undefined);
  return false;
}
