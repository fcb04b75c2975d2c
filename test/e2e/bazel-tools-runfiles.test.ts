import { describe, expect, it } from 'vitest';
import { E2eWorkspace } from './e2e-workspace.js';

const LOCAL = '--spawn_strategy=local';

/** A test that finds its data and an external repository's file through @bazel_tools' Bash runfiles library. */
const TEST_SH = `#!/usr/bin/env bash
# --- begin runfiles.bash initialization v3 ---
set -uo pipefail; set +e; f=bazel_tools/tools/bash/runfiles/runfiles.bash
source "\${RUNFILES_DIR:-/dev/null}/$f" 2>/dev/null || \\
  source "$(grep -sm1 "^$f " "\${RUNFILES_MANIFEST_FILE:-/dev/null}" | cut -f2- -d' ')" 2>/dev/null || \\
  source "$0.runfiles/$f" 2>/dev/null || \\
  source "$(grep -sm1 "^$f " "$0.runfiles_manifest" | cut -f2- -d' ')" 2>/dev/null || \\
  { echo>&2 "ERROR: cannot find $f"; exit 1; }; f=; set -e
# --- end runfiles.bash initialization v3 ---
data="$(rlocation myws/pkg/data.txt)"
other="$(rlocation other/lib/d.txt)"
[[ "$(cat "$data")" == "source data" ]] || { echo "data: $data"; exit 1; }
[[ "$(cat "$other")" == "external data" ]] || { echo "other: $other"; exit 1; }
if rlocation myws/pkg/missing.txt; then echo "missing found"; exit 1; fi
# The manifest alone (Kiln writes exec paths in it): the library finds the files from it too.
lib="$RUNFILES_DIR/bazel_tools/tools/bash/runfiles/runfiles.bash"
manifest="$RUNFILES_DIR/MANIFEST"
from_manifest="$(RUNFILES_DIR= RUNFILES_MANIFEST_FILE="$manifest" bash -c 'source "$1"; cat "$(rlocation myws/pkg/data.txt)"' _ "$lib")"
[[ "$from_manifest" == "source data" ]] || { echo "from manifest: $from_manifest"; exit 1; }
echo "rlocation ok"
`;

describe('@bazel_tools//tools/bash/runfiles in a test', () => {
  it('an sh_test depending on the runfiles library finds its runfiles with rlocation', async () => {
    const ws = new E2eWorkspace({
      WORKSPACE: 'workspace(name = "myws")\nlocal_repository(name = "other", path = "ext")\n',
      'ext/WORKSPACE': 'workspace(name = "other")\n',
      'ext/lib/BUILD': 'exports_files(["d.txt"])\n',
      'ext/lib/d.txt': 'external data\n',
      'pkg/BUILD': `sh_test(
    name = "t",
    srcs = ["t.sh"],
    data = ["data.txt", "@other//lib:d.txt"],
    deps = ["@bazel_tools//tools/bash/runfiles"],
)
`,
      'pkg/t.sh': TEST_SH,
      'pkg/data.txt': 'source data\n',
    });
    const run = await ws.kiln(['test', LOCAL, '--test_output=all', '//pkg:t']);
    expect(run.code, run.stderr + run.stdout).toBe(0);
    expect(run.stdout + run.stderr).toContain('rlocation ok');
  });
});
