import { expect, it } from 'vitest';

/** What else a test file says about a need. */
export interface ToolNeed {
  /**
   * Set only where the project's documentation makes the thing optional (a host capability Kiln
   * works without, such as delegated cgroups): where the documentation says so. Its absence is then a
   * named skip under CI too.
   */
  readonly optional?: string;
}

/**
 * Whether a tool the following tests need (Docker, bubblewrap, Bazel, a C compiler, the built
 * bundle, openssl...) or a host capability is available. When it is not, a test named after it says
 * why and how to get it: under CI (`CI=true`) that test fails, so a missing tool can never pass as a
 * green run, unless the need is documented `optional`; elsewhere it is reported as skipped. Every test
 * that does not run everywhere goes through here, so none skips silently. Call it where the tests are
 * declared (top level or in a describe) and skip them on `false`.
 */
export function needTool(tool: string, available: boolean, howToGet: string, need: ToolNeed = {}): boolean {
  if (available) return true;
  const name = `needs ${tool}: ${howToGet}${need.optional ? ` (optional: ${need.optional})` : ''}`;
  if (process.env['CI'] === 'true' && !need.optional) it(name, () => expect.fail(`${tool} is missing under CI: ${howToGet}`));
  else it.skip(name, () => undefined);
  return false;
}
