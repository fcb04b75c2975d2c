import { chmodSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { E2eWorkspace } from './e2e-workspace.js';

// Bazel's --workspace_status_command: run at the start of each build in the workspace root, its
// `KEY VALUE` lines join the workspace status (STABLE_* in stable-status.txt, others in
// volatile-status.txt) that stamping rules read; a changed stable value re-runs them, even when the
// rest of the build graph is reused; a failing command fails the build in Bazel's words.
const files = {
  WORKSPACE: '',
  'status.sh': '#!/bin/bash\necho "STABLE_GIT_COMMIT $(cat commit.txt)"\necho "BUILD_SCM_STATUS clean"\n',
  'commit.txt': 'abc123\n',
  'pkg/defs.bzl': `
def _impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name + ".txt")
    ctx.actions.run_shell(outputs = [out], inputs = [ctx.info_file, ctx.version_file], command = "cat %s %s > %s" % (ctx.info_file.path, ctx.version_file.path, out.path))
    return [DefaultInfo(files = depset([out]))]
stamped = rule(implementation = _impl)
`,
  'pkg/BUILD': 'load(":defs.bzl", "stamped")\nstamped(name = "a")\n',
};

describe('--workspace_status_command', () => {
  it('stamps with what the command prints, and a changed stable value re-runs the stamped action', async () => {
    const ws = new E2eWorkspace(files);
    chmodSync(join(ws.root, 'status.sh'), 0o755);
    const build = () => ws.kiln(['build', '--spawn_strategy=local', '--workspace_status_command=./status.sh', '//pkg:a']);
    const first = await build();
    expect(first.code, first.stderr).toBe(0);
    expect(ws.read('kiln-bin/pkg/a.txt')).toMatch(/^STABLE_GIT_COMMIT abc123$/m);
    expect(ws.read('kiln-bin/pkg/a.txt')).toMatch(/^BUILD_SCM_STATUS clean$/m);
    expect(ws.read('kiln-out/stable-status.txt')).toMatch(/^STABLE_GIT_COMMIT abc123$/m);
    expect(ws.read('kiln-out/volatile-status.txt')).toMatch(/^BUILD_SCM_STATUS clean$/m);

    ws.write({ 'commit.txt': 'def456\n' });
    const second = await build();
    expect(second.code, second.stderr).toBe(0);
    expect(ws.read('kiln-bin/pkg/a.txt')).toMatch(/^STABLE_GIT_COMMIT def456$/m);
  });

  it('fails the build when the command fails, naming why', async () => {
    const ws = new E2eWorkspace({ ...files, 'status.sh': '#!/bin/bash\necho broken >&2\nexit 3\n' });
    chmodSync(join(ws.root, 'status.sh'), 0o755);
    const run = await ws.kiln(['build', '--spawn_strategy=local', '--workspace_status_command=./status.sh', '//pkg:a']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('ERROR: Failed to determine workspace status: Process exited with status 3\nbroken');
    expect(run.stderr).toContain('ERROR: Build did NOT complete successfully');
  });
});
