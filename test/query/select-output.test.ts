import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/commands/query.js';
import type { CliIO } from '../../src/cli/io.js';
import { workspaceFixture } from '../loading/fixture.js';
import { SELECT_WORKSPACE } from '../loading/select-fixture.js';

// Every expected output below was printed by Bazel 2.1.0 (`bazel --batch query ...`) on this
// workspace, with the workspace path replaced by ROOT.
async function query(...args: string[]): Promise<string> {
  const root = workspaceFixture(SELECT_WORKSPACE);
  let out = '';
  const io: CliIO = { stdout: { write: (c) => (out += String(c)) }, stderr: { write: () => true }, cwd: root, env: {} };
  expect(await main([`--output_base=${join(root, '.ob')}`, ...args], io)).toBe(0);
  return out.replaceAll(root, 'ROOT');
}

const OPT = 'select({"//p:opt": ["//p:o.txt"], "//conditions:default": ["//p:d.txt"]})';

describe('query output of select()', () => {
  it('--output=build prints concatenated selects as Bazel 2.1.0 (no_match_error not shown)', async () => {
    expect(await query('--output=build', '//p:left + //p:right + //p:both + //p:g')).toBe(
      [
        '# ROOT/p/BUILD:9:1',
        'filegroup(',
        '  name = "right",',
        `  srcs = ${OPT} + ["//p:b.txt"],`,
        ')',
        '',
        '# ROOT/p/BUILD:7:1',
        'filegroup(',
        '  name = "left",',
        `  srcs = ["//p:a.txt"] + ${OPT},`,
        ')',
        '',
        '# ROOT/p/BUILD:15:1',
        'genrule(',
        '  name = "g",',
        '  outs = ["//p:g.out"],',
        '  cmd = "echo " + select({"//p:opt": "o", "//conditions:default": "d"}) + " > $@",',
        ')',
        '',
        '# ROOT/p/BUILD:11:1',
        'filegroup(',
        '  name = "both",',
        `  srcs = ["//p:a.txt"] + ${OPT} + select({"//p:opt": ["//p:c.txt"], "//conditions:default": []}) + ["//p:b.txt"],`,
        ')',
        '',
        '',
      ].join('\n'),
    );
  });

  it('--output=build of a select a macro passed through', async () => {
    // Bazel 2.1.0 printed the same srcs line; its generator_location for a workspace under /tmp read
    // "p/hsel/ws2/p/BUILD:13", a quirk of that run's directory (test/query/differential pins the normal form).
    expect(await query('--output=build', '//p:macro')).toContain(`  srcs = ${OPT} + ["//p:m.txt"],\n)`);
  });

  it('attr() matches a value any branch or plain part holds; labels() lists them all', async () => {
    expect(await query('--output=label_kind', 'attr(srcs, "c.txt", //p:all)')).toBe('filegroup rule //p:both\n');
    expect(await query('labels(srcs, //p:both)')).toBe('//p:o.txt\n//p:d.txt\n//p:c.txt\n//p:b.txt\n//p:a.txt\n');
  });
});
