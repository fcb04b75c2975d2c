// Removes a temp tree that Bazel wrote into (a workspace copy and its --output_user_root). Bazel
// leaves its install base and outputs read-only, so write permission is restored first.
import { chmodSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

function makeWritable(dir) {
  for (const entry of readdirSync(dir)) {
    const p = join(dir, entry);
    const st = statSync(p, { throwIfNoEntry: false });
    if (!st || st.isSymbolicLink()) continue;
    chmodSync(p, st.mode | 0o200);
    if (st.isDirectory()) makeWritable(p);
  }
}

export function removeBazelTree(dir) {
  makeWritable(dir);
  rmSync(dir, { recursive: true, force: true });
}
