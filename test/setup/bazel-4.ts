import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

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
export function runBazel4(root: string, args: readonly string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(BAZEL_4, ['--batch', ...args], {
      cwd: join(root, 'ws'),
      env: {
        PATH: process.env['PATH'] ?? '/usr/bin:/bin',
        HOME: join(root, 'home'),
        TMPDIR: join(root, 'tmp'),
        KILN_REF_BAZEL_ROOT: join(root, 'bazel4-root'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}
