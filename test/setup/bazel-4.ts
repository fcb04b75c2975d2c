import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { runBazelIn, type BazelRun } from './bazel-2.js';

const REPO = join(import.meta.dirname, '../..');

/**
 * Bazel 4.2.3, the reference script in shared/reference-bazel beside the checkout (the main checkout
 * or a worktree one level further down), or KILN_REFERENCE_BAZEL4. It installs Debian's
 * bazel-bootstrap on first use (root and apt).
 */
export const BAZEL_4 =
  [process.env['KILN_REFERENCE_BAZEL4'], join(REPO, '../shared/reference-bazel/bazel4'), join(REPO, '../../shared/reference-bazel/bazel4')].find(
    (p): p is string => p !== undefined && p !== '' && existsSync(p),
  ) ?? '';
export const BAZEL_4_MISSING = 'shared/reference-bazel/bazel4 is not beside the checkout: set KILN_REFERENCE_BAZEL4 to the script';

/** `bazel4 --batch ARGS` in `root/ws`, everything it keeps under `root`; stdout and stderr interleaved. */
export function runBazel4(root: string, args: readonly string[]): Promise<BazelRun> {
  return runBazelIn(root, BAZEL_4, ['--batch', ...args], { KILN_REF_BAZEL_ROOT: join(root, 'bazel4-root') });
}
