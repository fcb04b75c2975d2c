import { describe, expect, it } from 'vitest';
import { E2eWorkspace } from './e2e-workspace.js';

const WORKSPACE = { WORKSPACE: '', 'pkg/BUILD': 'genrule(name = "g", outs = ["g.txt"], cmd = "echo > $@")\n' };

describe("kiln query's inputs are bounded and checked", () => {
  it('--query_file reads at most 64 MiB: an endless file is a usage error naming the flag', async () => {
    const run = await new E2eWorkspace(WORKSPACE).kiln(['query', '--query_file=/dev/zero']);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe('ERROR: --query_file=/dev/zero: /dev/zero is larger than 64 MiB, the most a query may be\n');
  });

  it('--universe_scope is a comma-separated list of target patterns: a malformed one is exit 2 naming the flag', async () => {
    const ws = new E2eWorkspace(WORKSPACE);
    const bad = await ws.kiln(['query', '--universe_scope=//pkg:g,foo:bar:baz', '//pkg:g']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(
      "ERROR: While parsing option --universe_scope=//pkg:g,foo:bar:baz: invalid target format 'foo:bar:baz': invalid target name 'bar:baz': target names may not contain ':'\n",
    );
    const good = await ws.kiln(['query', '--universe_scope=//pkg/...,//pkg:g', 'allrdeps(//pkg:g)']);
    expect(good.code, good.stderr).toBe(0);
    expect(good.stdout).toBe('//pkg:g\n');
  });
});
