import { spawn } from 'node:child_process';
import { join } from 'node:path';

/** Bazel 2.1.0, installed by scripts/test-setup.d/30-bazel.sh, which exports its path. */
export const BAZEL_2 = process.env['KILN_BAZEL'] ?? '';
export const BAZEL_2_MISSING = 'KILN_BAZEL is not set: run scripts/test-setup.d/30-bazel.sh (or npm test) to install Bazel 2.1.0';

export interface BazelRun {
  readonly code: number | null;
  /** stdout and stderr, interleaved as they came. */
  readonly output: string;
}

/**
 * `bazel --batch ARGS` in `root/ws`, with everything Bazel keeps under `root` (its output user root,
 * HOME and TMPDIR) so that a test's runs share nothing with others and leave nothing behind.
 */
export function runBazel2(root: string, args: readonly string[]): Promise<BazelRun> {
  return runBazelIn(root, BAZEL_2, [`--output_user_root=${join(root, 'bazel-root')}`, '--batch', ...args]);
}

/** `bazel ARGS` in `root/ws` with HOME and TMPDIR under `root` (and `env` besides); stdout and stderr interleaved. */
export function runBazelIn(root: string, bazel: string, args: readonly string[], env: Record<string, string> = {}): Promise<BazelRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(bazel, args, {
      cwd: join(root, 'ws'),
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: join(root, 'home'), TMPDIR: join(root, 'tmp'), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}
