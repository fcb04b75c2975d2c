import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { E2eWorkspace } from './e2e-workspace.js';

const GENRULES = `genrule(name = "srcs", srcs = glob(["*.txt"]), outs = ["srcs.out"], cmd = "cat $(SRCS) > $@")
filegroup(name = "files", srcs = glob(["*.txt"]))
genrule(name = "quoted", srcs = [":files"], outs = ["quoted.out"], cmd = "cat $(execpaths :files) > $@")
`;

/** Did any command run `touch X`? It would have made X in the execroot or the workspace. */
function touched(ws: E2eWorkspace, outputBase: string): boolean {
  return existsSync(join(ws.root, 'X')) || existsSync(join(outputBase, 'execroot', 'ws', 'X'));
}

/** A workspace with the genrules and one source file named `name`; `build(target)` runs its actions locally. */
function workspaceWith(name: string) {
  const ws = new E2eWorkspace({ WORKSPACE: '', 'pkg/BUILD': GENRULES, [`pkg/${name}`]: 'a\n' });
  const outputBase = join(ws.home, 'ob');
  const build = (target: string) => ws.kiln([`--output_base=${outputBase}`, 'build', '--spawn_strategy=local', target]);
  return { ws, build, touched: () => touched(ws, outputBase) };
}

describe('a globbed file name never runs as a command in a genrule', () => {
  it('dollar$(touch X).txt in $(SRCS) is Bazel\'s "$(touch) not defined", at analysis', async () => {
    const { build, touched } = workspaceWith('dollar$(touch X).txt');
    const run = await build('//pkg:srcs');
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toContain('ERROR: pkg/BUILD:1:1: in cmd attribute of genrule rule //pkg:srcs: $(touch) not defined\n');
    expect(touched()).toBe(false);
  });

  it('semi;touch X;.txt in $(SRCS) is refused; through $(execpaths), which quotes it, it builds', async () => {
    const { ws, build, touched } = workspaceWith('semi;touch X;.txt');
    const refused = await build('//pkg:srcs');
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr).toContain("$(SRCS) would put 'pkg/semi;touch X;.txt' into the command unquoted, and the shell interprets its ';'");
    const quoted = await build('//pkg:quoted');
    expect(quoted.code, quoted.stderr).toBe(0);
    expect(ws.read('kiln-bin/pkg/quoted.out')).toBe('a\n');
    expect(touched()).toBe(false);
  });
});
