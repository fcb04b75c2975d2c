import { describe, expect, it } from 'vitest';
import { analyzerFor } from './bazel-fixture.js';

const DEFS = `
def _tree(ctx):
    d = ctx.actions.declare_directory(ctx.attr.name + "_dir")
    s = ctx.actions.declare_symlink(ctx.attr.name + "_link")
    f = ctx.actions.declare_file(ctx.attr.name + ".txt")
    print("kinds", d.is_directory, d.is_symlink, s.is_directory, s.is_symlink, f.is_directory, d.path, d.short_path)
    ctx.actions.run_shell(outputs = [d], command = "mkdir -p " + d.path + "/sub")
    ctx.actions.symlink(output = s, target_path = "../some/where")
    args = ctx.actions.args()
    args.add_all([d], format_each = "--in=%s")
    args.add_all([d], expand_directories = False)
    args.add_joined([d], join_with = ",", map_each = _child)
    ctx.actions.run_shell(outputs = [f], inputs = [d, s], arguments = [args], command = "echo $@ > " + f.path)
    return [DefaultInfo(files = depset([d, s, f]))]

def _child(file):
    return file.tree_relative_path

tree = rule(_tree)

def _link(ctx):
    out = ctx.actions.declare_directory(ctx.attr.name + "_copy")
    ctx.actions.symlink(output = out, target_file = ctx.file.src)
    return [DefaultInfo(files = depset([out]))]

link = rule(_link, attrs = {"src": attr.label(allow_single_file = True)})

def _only_dir(ctx):
    d = ctx.actions.declare_directory(ctx.attr.name)
    ctx.actions.run_shell(outputs = [d], command = "true")
    return [DefaultInfo(files = depset([d]))]

only_dir = rule(_only_dir)

def _bad(ctx):
    mode = ctx.attr.mode
    if mode == "twice":
        ctx.actions.declare_file("x")
        ctx.actions.declare_directory("x")
    out = ctx.actions.declare_symlink("l")
    if mode == "both":
        ctx.actions.symlink(output = out, target_path = "a", target_file = ctx.file.src)
    elif mode == "neither":
        ctx.actions.symlink(output = out)
    elif mode == "file_into_symlink":
        ctx.actions.symlink(output = out, target_file = ctx.file.src)
    return []

bad = rule(_bad, attrs = {"mode": attr.string(), "src": attr.label(allow_single_file = True)})
`;

const BUILD = `
load(":defs.bzl", "bad", "link", "only_dir", "tree")
tree(name = "t")
only_dir(name = "d")
link(name = "copy", src = ":d")
bad(name = "twice", mode = "twice")
bad(name = "both", mode = "both", src = "BUILD")
bad(name = "neither", mode = "neither")
bad(name = "file_into_symlink", mode = "file_into_symlink", src = "BUILD")
`;

const files = { 'trees/defs.bzl': DEFS, 'trees/BUILD': BUILD };

describe('declare_directory, declare_symlink and symlink() in Starlark rules', () => {
  it('declares a directory File and an unresolved symlink File, each with its kind, on the action outputs', () => {
    const { analyzer, debug } = analyzerFor([], files);
    const t = analyzer.analyzeTopLevel('//trees:t');
    expect(debug).toContainEqual(expect.stringMatching(/^kinds True False False True False \S+\/bin\/trees\/t_dir trees\/t_dir$/));
    expect(t.files.map((f) => [f.rootPath, f.artifact.kind === 'derived' ? f.artifact.type : 'source'])).toEqual([
      ['trees/t_dir', 'directory'],
      ['trees/t_link', 'symlink'],
      ['trees/t.txt', undefined],
    ]);
    const link = t.actions.find((a) => a.outputs[0]!.execPath.endsWith('/t_link'))!;
    expect(link.inProcess).toEqual({ kind: 'unresolved_symlink', targetPath: '../some/where' });
    expect(link.inputs).toEqual([]);
  });

  it('Args expand a directory at execution (format_each and map_each see each file), keep it whole with expand_directories = False', () => {
    const { analyzer } = analyzerFor([], files);
    const t = analyzer.analyzeTopLevel('//trees:t');
    const use = t.actions.find((a) => a.outputs[0]!.execPath.endsWith('/t.txt'))!;
    const dir = t.files[0]!.artifact.execPath;
    // Before the tree exists the directory stands for itself.
    expect(use.argv.slice(4)).toEqual([`--in=${dir}`, dir, '']);
    const expanded = use.argvWithTrees!((tree) => (tree === dir ? [`${dir}/a.txt`, `${dir}/sub/b.txt`] : []));
    expect(expanded.slice(4)).toEqual([`--in=${dir}/a.txt`, `--in=${dir}/sub/b.txt`, dir, 'a.txt,sub/b.txt']);
  });

  it('symlink(target_file=) of a directory into a declared directory copies the tree', () => {
    const { analyzer } = analyzerFor([], files);
    const copy = analyzer.analyzeTopLevel('//trees:copy');
    const action = copy.actions[0]!;
    expect(action.inProcess).toEqual({ kind: 'copy_directory', target: expect.stringMatching(/\/bin\/trees\/d$/) });
    expect(action.outputs[0]!.type).toBe('directory');
  });

  const errorOf = (label: string) => {
    const { analyzer } = analyzerFor([], files);
    try {
      analyzer.analyzeTopLevel(label);
    } catch (e) {
      return (e as Error).message;
    }
    throw new Error(`no error for ${label}`);
  };

  it("rejects, in present-day Bazel's words, a path declared as two kinds and symlink() with the wrong targets", () => {
    expect(errorOf('//trees:twice')).toContain("declare_directory: 'trees/x' is already declared as a regular file");
    expect(errorOf('//trees:both')).toContain('Exactly one of "target_file" or "target_path" is required');
    expect(errorOf('//trees:neither')).toContain('Exactly one of "target_file" or "target_path" is required');
    expect(errorOf('//trees:file_into_symlink')).toContain(
      'symlink() with "target_file" param requires that "output" be declared as a file or directory, not a symlink (did you mean to use declare_file() or declare_directory() instead of declare_symlink()?)',
    );
  });
});
