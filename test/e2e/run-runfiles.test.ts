import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { E2eWorkspace } from './e2e-workspace.js';

const LOCAL = '--spawn_strategy=local';

/** A program that shows where it runs and what its data files hold, read through its runfiles tree. */
const SHOW = `#!/bin/bash
set -eu
runfiles="$(cd "$0.runfiles" && pwd)"
echo "cwd: \${PWD#$runfiles}"
echo "args: $*"
cat pkg/data.txt pkg/made.txt ../other/lib/d.txt
cat "$0.runfiles/myws/pkg/data.txt"
echo "workspace: \${BUILD_WORKSPACE_DIRECTORY#$WS_PARENT}"
echo "working: \${BUILD_WORKING_DIRECTORY#$WS_PARENT}"
echo "runfiles variables: \${RUNFILES_DIR-unset} \${RUNFILES_MANIFEST_FILE-unset} \${JAVA_RUNFILES-unset} \${TEST_SRCDIR-unset}"
`;

function workspace(): E2eWorkspace {
  return new E2eWorkspace({
    WORKSPACE: 'workspace(name = "myws")\nlocal_repository(name = "other", path = "ext")\n',
    'ext/WORKSPACE': 'workspace(name = "other")\n',
    'ext/lib/BUILD': 'exports_files(["d.txt"])\n',
    'ext/lib/d.txt': 'external data\n',
    'pkg/show.sh': SHOW,
    'pkg/data.txt': 'source data\n',
    'pkg/defs.bzl': `
def _impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name + ".sh")
    ctx.actions.expand_template(template = ctx.file.src, output = out, substitutions = {}, is_executable = True)
    return [DefaultInfo(executable = out, runfiles = ctx.runfiles(files = ctx.files.data))]

runner = rule(
    implementation = _impl,
    executable = True,
    attrs = {"src": attr.label(allow_single_file = True), "data": attr.label_list(allow_files = True)},
)
`,
    'pkg/BUILD': `
load(":defs.bzl", "runner")
genrule(name = "made", outs = ["made.txt"], cmd = "echo generated data > $@")
DATA = ["data.txt", ":made", "@other//lib:d.txt"]
sh_binary(name = "sh", srcs = ["show.sh"], data = DATA)
runner(name = "starlark", src = "show.sh", data = DATA)
`,
    'pkg/sub/.keep': '',
  });
}

/** What SHOW prints when run as `name` from `pkg/sub` with arguments `x y`. */
function expectedOutput(): string {
  return [
    'cwd: /myws',
    'args: x y',
    'source data',
    'generated data',
    'external data',
    'source data',
    'workspace: /ws',
    'working: /ws/pkg/sub',
    'runfiles variables: unset unset unset unset',
    '',
  ].join('\n');
}

describe('kiln run: the runfiles tree', () => {
  for (const name of ['sh', 'starlark']) {
    it(`${name === 'sh' ? 'sh_binary' : 'a Starlark executable rule'}: starts in <program>.runfiles/<workspace> and reaches its data through the tree`, async () => {
      const ws = workspace();
      const parent = join(ws.root, '..');
      // Variables an outer program may have set are cleared, as Bazel's run does.
      const outer = {
        WS_PARENT: parent,
        RUNFILES_DIR: '/elsewhere',
        RUNFILES_MANIFEST_FILE: '/elsewhere/MANIFEST',
        JAVA_RUNFILES: '/elsewhere',
        TEST_SRCDIR: '/elsewhere',
      };
      const run = await ws.kiln(['run', LOCAL, `//pkg:${name}`, '--', 'x', 'y'], join(ws.root, 'pkg/sub'), undefined, undefined, outer);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toBe(expectedOutput());

      // Bazel's layout: external repositories under their names, and the manifest inside and beside the tree.
      const program = name === 'sh' ? 'kiln-bin/pkg/sh' : 'kiln-bin/pkg/starlark.sh';
      const tree = join(ws.root, `${program}.runfiles`);
      expect(readFileSync(join(tree, 'other/lib/d.txt'), 'utf8')).toBe('external data\n');
      const manifest = readFileSync(join(tree, 'MANIFEST'), 'utf8');
      // sh_binary's runfiles hold its source script too, as Bazel's do.
      const entries = name === 'sh' ? ['myws/pkg/sh', 'myws/pkg/show.sh'] : ['myws/pkg/starlark.sh'];
      expect(manifest.split('\n').map((l) => l.split(' ')[0])).toEqual(['myws/pkg/data.txt', 'myws/pkg/made.txt', ...entries, 'other/lib/d.txt', '']);
      expect(readFileSync(join(ws.root, `${program}.runfiles_manifest`), 'utf8')).toBe(manifest);
    });
  }

  it('a changed data file is in the tree at the next run; the null run rebuilds nothing', async () => {
    const ws = workspace();
    const env = { WS_PARENT: join(ws.root, '..') };
    expect((await ws.kiln(['run', LOCAL, '//pkg:sh'], join(ws.root, 'pkg/sub'), undefined, undefined, env)).code).toBe(0);
    const again = await ws.kiln(['run', LOCAL, '//pkg:sh'], join(ws.root, 'pkg/sub'), undefined, undefined, env);
    expect(again.stderr).toContain('0 packages loaded, 0 targets configured');
    expect(again.stderr).not.toContain('Creating runfiles tree');
    ws.write({ 'pkg/data.txt': 'edited data\n' });
    const edited = await ws.kiln(['run', LOCAL, '//pkg:sh'], join(ws.root, 'pkg/sub'), undefined, undefined, env);
    expect(edited.code, edited.stderr).toBe(0);
    expect(edited.stdout.split('\n').slice(2, 3)).toEqual(['edited data']);
  });

  it('kiln build does not make the tree; kiln run does', async () => {
    const ws = workspace();
    expect((await ws.kiln(['build', LOCAL, '//pkg:sh'])).code).toBe(0);
    expect(existsSync(join(ws.root, 'kiln-bin/pkg/sh.runfiles'))).toBe(false);
    expect((await ws.kiln(['run', LOCAL, '//pkg:sh'], ws.root, undefined, undefined, { WS_PARENT: join(ws.root, '..') })).code).toBe(0);
    expect(existsSync(join(ws.root, 'kiln-bin/pkg/sh.runfiles/MANIFEST'))).toBe(true);
  });
});
