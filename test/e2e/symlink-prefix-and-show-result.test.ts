import { existsSync, lstatSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { E2eWorkspace } from './e2e-workspace.js';

// Bazel's --symlink_prefix (its convenience symlinks' names; `/` for none), --show_result (how many
// requested targets still get their `Target ... up-to-date:` block) and the --curses / --color
// words rc files carry.
const files = {
  WORKSPACE: 'workspace(name = "links")\n',
  BUILD: [
    'genrule(name = "a", outs = ["a.txt"], cmd = "echo a > $@")',
    'genrule(name = "b", outs = ["b.txt"], cmd = "echo b > $@")',
    // A glob at the root never takes the convenience links (or what is behind them) for sources.
    'filegroup(name = "all", srcs = glob(["**"], exclude = ["WORKSPACE", "BUILD"]))',
    '',
  ].join('\n'),
  'src.txt': 'a source\n',
};
const LOCAL = '--spawn_strategy=local';

describe('--symlink_prefix, --show_result, --curses and --color', () => {
  it("names the links with Bazel's prefix, or makes none, and shows paths through them", async () => {
    const ws = new E2eWorkspace(files);
    const bazelNames = await ws.kiln(['build', LOCAL, '--symlink_prefix=bazel-', '//:a']);
    expect(bazelNames.code, bazelNames.stderr).toBe(0);
    for (const link of ['bazel-bin', 'bazel-out', 'bazel-testlogs', `bazel-${basename(ws.root)}`])
      expect(lstatSync(join(ws.root, link)).isSymbolicLink()).toBe(true);
    expect(existsSync(join(ws.root, 'kiln-bin'))).toBe(false);
    expect(ws.read('bazel-bin/a.txt')).toBe('a\n');
    expect(bazelNames.stderr).toContain('Target //:a up-to-date:\n  bazel-bin/a.txt\n');

    // With the links there, the root's glob still sees the sources only.
    const query = await ws.kiln(['query', '--output=build', '//:all']);
    expect(query.stdout).toContain('srcs = ["//:src.txt"]');

    const none = new E2eWorkspace(files);
    const noLinks = await none.kiln(['build', LOCAL, '--symlink_prefix=/', '//:a']);
    expect(noLinks.code, noLinks.stderr).toBe(0);
    expect(existsSync(join(none.root, 'kiln-bin'))).toBe(false);
    expect(noLinks.stderr).toMatch(/Target \/\/:a up-to-date:\n {2}bazel-out\/k8-fastbuild\/bin\/a\.txt\n/);
  });

  it('prints the target blocks while at most --show_result targets were requested', async () => {
    const ws = new E2eWorkspace(files);
    const two = await ws.kiln(['build', LOCAL, '--show_result=2', '//:a', '//:b']);
    expect(two.stderr).toContain('Target //:a up-to-date:\n  kiln-bin/a.txt\nTarget //:b up-to-date:\n  kiln-bin/b.txt\n');
    const fewer = await ws.kiln(['build', LOCAL, '//:a', '//:b']);
    expect(fewer.stderr).not.toContain('up-to-date');
    const none = await ws.kiln(['build', LOCAL, '--show_result=0', '//:a']);
    expect(none.stderr).not.toContain('up-to-date');
    const bad = await ws.kiln(['build', '--show_result=-1', '//:a']);
    expect(bad.code).toBe(2);
  });

  it('takes --curses and --color as Bazel spells them, and refuses other words', async () => {
    const ws = new E2eWorkspace(files);
    const plain = await ws.kiln(['build', LOCAL, '--curses=no', '--color=no', '//:a']);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stderr).not.toContain('\u001b[');
    const wrong = await ws.kiln(['build', '--color=sometimes', '//:a']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('--color');
  });
});
