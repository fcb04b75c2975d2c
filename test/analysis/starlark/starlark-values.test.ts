import { describe, expect, it } from 'vitest';
import { errorsOf, loadFixture } from '../../loading/load-helper.js';
import { analyzerFor } from './bazel-fixture.js';

/** Analyses `//t:t` of a package whose defs.bzl defines `r`; returns what the implementation printed. */
function run(defs: string, build = 'load(":defs.bzl", "r")\nr(name = "t")\n', extra: Record<string, string> = {}, label = '//t:t', args: string[] = []) {
  const { analyzer, debug, events } = analyzerFor(args, { 't/defs.bzl': defs, 't/BUILD': build, ...extra });
  const ct = analyzer.analyzeTopLevel(label);
  return { ct, debug, events, analyzer };
}

function errorOf(defs: string, build?: string, extra: Record<string, string> = {}): string {
  try {
    run(defs, build, extra);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('no error');
}

const RULE = (body: string, attrs = '{}') =>
  `def _impl(ctx):\n${body.replace(/^/gm, '    ')}\n    return []\nr = rule(implementation = _impl, attrs = ${attrs})\n`;

describe('depset', () => {
  it('keeps direct and transitive apart until to_list, removing duplicates', () => {
    const { debug } = run(RULE('a = depset(["x", "y"])\nb = depset(["y", "z"], transitive = [a, a])\nprint(b.to_list(), len(b.to_list()), bool(depset()))'));
    expect(debug).toEqual(['["x", "y", "z"] 3 False']);
  });

  it('rejects mixed element types, mutable elements and incompatible orders', () => {
    expect(errorOf(RULE('depset([1, "a"])'))).toContain("cannot add an item of type 'string' to a depset of 'int'");
    expect(errorOf(RULE('depset([[1]])'))).toContain('depset elements must not be mutable values');
    expect(errorOf(RULE('depset(transitive = [depset(["a"], order = "preorder")], order = "postorder")'))).toContain(
      "Order 'postorder' is incompatible with order 'preorder'",
    );
    expect(errorOf(RULE('depset(order = "random")'))).toContain('Invalid order: random');
  });
});

describe('provider()', () => {
  it('fields restrict instances; init computes them; the raw constructor skips init', () => {
    const defs = `
def _init(v):
    return {"value": v * 2}
P, _new_p = provider(fields = {"value": "doc"}, init = _init)
Q = provider(fields = ["a"])
def _impl(ctx):
    print(P(3).value, _new_p(value = 1).value, Q(a = 1) == Q(a = 1), type(P))
    return [P(1)]
r = rule(implementation = _impl)
`;
    expect(run(defs).debug).toEqual(['6 1 True Provider']);
    expect(errorOf('Q = provider(fields = ["a"])\n' + RULE('Q(b = 1)'))).toContain("got unexpected field 'b' in call to instantiate provider Q");
  });

  it("a dependency's providers by key; missing ones in Bazel's words", () => {
    const defs = `
P = provider()
Q = provider()
def _dep(ctx):
    return [P(x = ctx.label.name)]
dep = rule(implementation = _dep)
def _impl(ctx):
    d = ctx.attr.d
    print(d[P].x, P in d, Q in d, d[DefaultInfo].files.to_list())
    return []
r = rule(implementation = _impl, attrs = {"d": attr.label()})
def _bad(ctx):
    return [ctx.attr.d[Q]]
bad = rule(implementation = _bad, attrs = {"d": attr.label()})
`;
    const build = 'load(":defs.bzl", "r", "dep", "bad")\ndep(name = "d")\nr(name = "t", d = ":d")\nbad(name = "b", d = ":d")\n';
    expect(run(defs, build).debug).toEqual(['d True False []']);
    expect(() => run(defs, build, {}, '//t:b')).toThrow("<target //t:d> (rule 'dep') doesn't contain declared provider 'Q'");
  });

  it('built-in rules expose DefaultInfo and OutputGroupInfo to Starlark rules', () => {
    const defs = RULE(
      'for d in ctx.attr.deps:\n    print(d.label, [f.short_path for f in d[DefaultInfo].files.to_list()], d[DefaultInfo].files_to_run.executable)',
      '{"deps": attr.label_list(allow_files = True)}',
    );
    const build = `load(":defs.bzl", "r")
genrule(name = "g", outs = ["g.sh"], cmd = "touch $@", executable = True)
filegroup(name = "fg", srcs = ["a.txt", ":g"])
sh_binary(name = "sh", srcs = ["s.sh"])
alias(name = "al", actual = ":fg")
r(name = "t", deps = [":g", ":fg", ":sh", ":al", "a.txt"])
`;
    const { debug } = run(defs, build, { 't/a.txt': '', 't/s.sh': '' });
    expect(debug).toEqual([
      '//t:g ["t/g.sh"] <generated file t/g.sh>',
      '//t:fg ["t/a.txt", "t/g.sh"] None',
      '//t:sh ["t/sh"] <generated file t/sh>',
      '//t:al ["t/a.txt", "t/g.sh"] None',
      '//t:a.txt ["t/a.txt"] None',
    ]);
  });
});

describe('rule() and attributes', () => {
  it('defaults, select() in Starlark attributes, label defaults relative to the .bzl, implicit dependencies', () => {
    const defs = `
def _impl(ctx):
    print(ctx.attr.s, ctx.attr.i, ctx.attr.il, ctx.attr.sd, ctx.attr._tool.label, ctx.attr.out, ctx.outputs.out.short_path)
    ctx.actions.write(ctx.outputs.out, "")
    return []
r = rule(implementation = _impl, attrs = {
    "s": attr.string(default = "d", values = ["d", "opt"]),
    "i": attr.int(default = 3),
    "il": attr.int_list(default = [1, 2]),
    "sd": attr.string_dict(),
    "_tool": attr.label(default = ":tool"),
    "out": attr.output(),
})
`;
    const build = `load(":defs.bzl", "r")
config_setting(name = "opt", values = {"compilation_mode": "opt"})
filegroup(name = "tool")
r(name = "t", s = select({":opt": "opt", "//conditions:default": "d"}), sd = {"k": "v"}, out = "o.txt")
`;
    expect(run(defs, build).debug).toEqual(['d 3 [1, 2] {"k": "v"} //t:tool //t:o.txt t/o.txt']);
    expect(run(defs, build, {}, '//t:t', ['-c', 'opt']).debug[0]).toMatch(/^opt /);
  });

  it('implicit outputs (outputs = {...}) are targets and ctx.outputs entries', () => {
    const defs = `
def _impl(ctx):
    ctx.actions.write(ctx.outputs.out, ctx.attr.name)
r = rule(implementation = _impl, outputs = {"out": "%{name}.gen"})
`;
    const { ct, analyzer } = run(defs, 'load(":defs.bzl", "r")\nr(name = "t")\n');
    expect(ct.files.map((f) => f.rootPath)).toEqual(['t/t.gen']);
    expect(analyzer.analyzeTopLevel('//t:t.gen').files[0]!.rootPath).toBe('t/t.gen');
  });

  it('checks attr.* arguments when the .bzl file loads', () => {
    const loadError = (defs: string) => errorsOf(loadFixture({ 't/defs.bzl': defs, 't/BUILD': 'load(":defs.bzl", "x")\n' }, 't').pkg).join('\n');
    expect(loadError('x = attr.label(executable = True)\n')).toContain('t/defs.bzl:1:15: cfg parameter is mandatory when executable=True is provided.');
    expect(loadError('x = attr.string(default = 1)\n')).toContain("attr.string: for parameter default: expected value of type 'string'");
    expect(loadError('x = rule(implementation = 1)\n')).toContain('rule: for parameter implementation: got int, want function');
    expect(loadError('x = rule(implementation = print, attrs = {"name": attr.string()})\n')).toContain(
      "There is already a built-in attribute 'name' which cannot be overridden",
    );
    expect(loadError('x = rule(implementation = print, test = True)\n')).toContain(
      "Invalid rule class name 'x', test rule class names must end with '_test' and other rule classes must not",
    );
  });

  it('providers = [...] on an attribute: the dependency must return them', () => {
    const defs = `
P = provider()
def _impl(ctx):
    return []
r = rule(implementation = _impl, attrs = {"d": attr.label(providers = [P])})
`;
    expect(errorOf(defs, 'load(":defs.bzl", "r")\nfilegroup(name = "fg")\nr(name = "t", d = ":fg")\n')).toBe(
      "in d attribute of r rule //t:t: '//t:fg' does not have mandatory providers: 'P'",
    );
  });

  it('InstrumentedFilesInfo (coverage_common) is accepted', () => {
    const defs =
      'def _impl(ctx):\n    return [coverage_common.instrumented_files_info(ctx, source_attributes = ["srcs"])]\nr = rule(implementation = _impl, attrs = {"srcs": attr.label_list(allow_files = True)})\n';
    expect(run(defs).ct.providers?.has('InstrumentedFilesInfo')).toBe(true);
  });

  it('an executable rule must return or create its executable', () => {
    const defs = 'def _impl(ctx):\n    return []\nr = rule(implementation = _impl, executable = True)\n';
    expect(errorOf(defs)).toContain(
      "The rule 'r' is executable. It needs to create an executable File and pass it as the 'executable' parameter to the DefaultInfo it returns.",
    );
  });
});

describe('ctx', () => {
  it('var, expand_location, expand_make_variables, runfiles, features', () => {
    const defs = `
def _impl(ctx):
    print(ctx.var["COMPILATION_MODE"], ctx.var["FOO"])
    print(ctx.expand_location("$(location a.txt) $(locations :fg)", [ctx.attr.fg]))
    print(ctx.expand_make_variables("cmd", "$(FOO)-$(X)", {"X": "y"}))
    r = ctx.runfiles(files = ctx.files.d, symlinks = {"link": ctx.files.d[0]}).merge(ctx.runfiles(transitive_files = depset(ctx.files.fg)))
    print([f.short_path for f in r.files.to_list()], [s.path for s in r.symlinks.to_list()])
    print(ctx.features, ctx.disabled_features)
    return [DefaultInfo(runfiles = r)]
r = rule(implementation = _impl, attrs = {"d": attr.label(allow_files = True), "fg": attr.label()})
`;
    const build = 'load(":defs.bzl", "r")\nfilegroup(name = "fg", srcs = ["a.txt", "b.txt"])\nr(name = "t", d = "a.txt", fg = ":fg", features = ["x", "-y"])\n';
    const { debug, ct } = run(defs, build, { 't/a.txt': '', 't/b.txt': '' }, '//t:t', ['--define=FOO=bar']);
    expect(debug).toEqual(['fastbuild bar', 't/a.txt t/a.txt t/b.txt', 'bar-y', '["t/a.txt", "t/b.txt"] ["link"]', '["x"] ["y"]']);
    expect(ct.runfiles.map((f) => f.rootPath)).toEqual(['t/a.txt', 't/b.txt']);
  });
});

describe('ctx.resolve_tools, ctx.expand_location and function str', () => {
  it("resolve_tools gives the tools' executables and runfiles; expand_location keeps $$ and Make variables as written", () => {
    const defs = `
def _impl(ctx):
    inputs, manifests = ctx.resolve_tools(tools = [ctx.attr.tool])
    print([f.short_path for f in inputs.to_list()], manifests)
    print(ctx.expand_location("$(location a.txt) $$(location a.txt) $$PATH $(FOO)", [ctx.attr.d]))
    print(str(_impl))
    return []
r = rule(implementation = _impl, attrs = {"d": attr.label(allow_files = True), "tool": attr.label(executable = True, cfg = "exec")})
`;
    const build = 'load(":defs.bzl", "r")\nsh_binary(name = "tool", srcs = ["tool.sh"], data = ["a.txt"])\nr(name = "t", d = "a.txt", tool = ":tool")\n';
    const { debug } = run(defs, build, { 't/a.txt': '', 't/tool.sh': '' });
    expect(debug).toEqual(['["t/tool", "t/tool.sh", "t/a.txt"] []', 't/a.txt $t/a.txt $$PATH $(FOO)', '<function _impl from //t:defs.bzl>']);
  });
});

describe('ctx.fragments', () => {
  it("cpp.minimum_os_version() reads --minimum_os_version (None when unset); an undeclared fragment is an error in Bazel's words", () => {
    const defs = `
def _impl(ctx):
    print(ctx.fragments.cpp.minimum_os_version())
    return []
r = rule(implementation = _impl, fragments = ["cpp"])
def _undeclared(ctx):
    ctx.fragments.cpp
u = rule(implementation = _undeclared)
`;
    const build = 'load(":defs.bzl", "r", "u")\nr(name = "t")\nu(name = "u")\n';
    expect(run(defs, build, {}, '//t:t').debug).toEqual(['None']);
    expect(run(defs, build, {}, '//t:t', ['--minimum_os_version=1234.5678']).debug).toEqual(['1234.5678']);
    expect(() => run(defs, build, {}, '//t:u')).toThrow(
      `u has to declare 'cpp' as a required fragment in target configuration in order to access it. Please update the 'fragments' argument of the rule definition (for example: fragments = ["cpp"])`,
    );
  });
});

describe('ctx.actions', () => {
  it('run with tools, env, execution_requirements, mnemonic and progress_message', () => {
    const defs = `
def _impl(ctx):
    out = ctx.actions.declare_file("o/out.txt")
    ctx.actions.run(
        outputs = [out],
        inputs = depset(ctx.files.srcs),
        executable = ctx.executable.tool,
        arguments = [ctx.actions.args().add_all(ctx.files.srcs, map_each = lambda f: f.basename.upper())],
        env = {"A": "1"},
        execution_requirements = {"no-remote": "1"},
        mnemonic = "Upper",
        progress_message = "Upper %{label} to %{output}",
    )
    return [DefaultInfo(files = depset([out]))]
r = rule(implementation = _impl, attrs = {"srcs": attr.label_list(allow_files = [".txt"]), "tool": attr.label(executable = True, cfg = "exec", allow_files = True)})
`;
    const build = 'load(":defs.bzl", "r")\nr(name = "t", srcs = ["a.txt"], tool = "tool.sh")\n';
    const { ct } = run(defs, build, { 't/a.txt': '', 't/tool.sh': '' });
    const [action] = ct.actions;
    expect(action).toMatchObject({
      mnemonic: 'Upper',
      argv: ['t/tool.sh', 'A.TXT'],
      env: { A: '1' },
      executionRequirements: ['no-remote'],
      progressMessage: expect.stringMatching(/^Upper \/\/t:t to bazel-out\/k8-fastbuild\/bin\/t\/o\/out\.txt$/),
    });
    expect(action!.inputs.map((i) => i.execPath)).toEqual(['t/a.txt', 't/tool.sh']);
  });

  it('Args keep depsets unexpanded: map_each runs when the command line is read, not during analysis', () => {
    const defs = `
def _fail_each(f):
    fail("mapped " + f.basename)

def _impl(ctx):
    out = ctx.actions.declare_file("out")
    args = ctx.actions.args()
    args.add("--in")
    args.add_all(depset(ctx.files.srcs), map_each = _fail_each)
    ctx.actions.run_shell(outputs = [out], arguments = [args], command = "true")
    written = ctx.actions.declare_file("written")
    ctx.actions.write(written, ctx.actions.args().add_joined("--x", depset(ctx.files.srcs), join_with = ",", map_each = _fail_each))
    return [DefaultInfo(files = depset([out, written]))]
r = rule(implementation = _impl, attrs = {"srcs": attr.label_list(allow_files = True)})
`;
    const { ct } = run(defs, 'load(":defs.bzl", "r")\nr(name = "t", srcs = ["a.txt"])\n', { 't/a.txt': '' });
    const shell = ct.actions.find((a) => a.mnemonic !== 'FileWrite')!;
    const write = ct.actions.find((a) => a.mnemonic === 'FileWrite')!;
    expect(() => shell.argv).toThrow('mapped a.txt');
    expect(() => write.inProcess!.kind === 'write' && write.inProcess!.content).toThrow('mapped a.txt');
  });

  it('Args: the command line is the one of its pieces in order, lists copied when added', () => {
    const defs = `
def _impl(ctx):
    out = ctx.actions.declare_file("out")
    names = ["x"]
    args = ctx.actions.args()
    args.add("-o", out, format = "--out=%s")
    args.add_all("--srcs", depset(ctx.files.srcs), before_each = "-s", format_each = "<%s>", terminate_with = "--")
    args.add_all(names, map_each = lambda n: [n, n.upper()], uniquify = True)
    args.add_all("--none", [], terminate_with = "end")
    args.add_all("--kept", [], omit_if_empty = False)
    args.add_joined("--j", depset(["a", "b", "a"]), join_with = ":", format_joined = "[%s]", uniquify = True)
    names.append("y")
    ctx.actions.run_shell(outputs = [out], arguments = [args, "tail"], command = "true")
    return [DefaultInfo(files = depset([out]))]
r = rule(implementation = _impl, attrs = {"srcs": attr.label_list(allow_files = True)})
`;
    const { ct } = run(defs, 'load(":defs.bzl", "r")\nr(name = "t", srcs = ["a.txt", "b.txt"])\n', { 't/a.txt': '', 't/b.txt': '' });
    const argv = ct.actions[0]!.argv;
    expect(argv.slice(0, 4)).toEqual(['/bin/bash', '-c', 'true', '']);
    expect(argv.slice(4)).toEqual([
      '-o',
      '--out=bazel-out/k8-fastbuild/bin/t/out',
      '--srcs',
      '-s',
      '<t/a.txt>',
      '-s',
      '<t/b.txt>',
      '--',
      'x',
      'X',
      '--kept',
      '--j',
      '[a:b]',
      'tail',
    ]);
    expect(ct.actions[0]!.argv).toBe(argv);
  });

  it('Args: a bad format or map_each is an error of the call that adds it', () => {
    expect(errorOf(RULE('ctx.actions.args().add_all([], format_each = "no placeholder")'))).toContain(
      'Invalid value for parameter "format_each": Expected string with a single "%s", got "no placeholder"',
    );
    expect(errorOf(RULE('ctx.actions.args().add_all([], map_each = "str")'))).toContain(
      'add_all: for parameter map_each: got string, want callable or NoneType',
    );
    expect(errorOf(RULE('ctx.actions.args().add_joined([], join_with = ",", format_joined = 1)'))).toContain(
      'add_joined: for parameter format_joined: got int, want string',
    );
  });

  it('Args with a params file: written in-process, named on the command line', () => {
    const defs = `
def _impl(ctx):
    out = ctx.actions.declare_file("out")
    args = ctx.actions.args()
    args.use_param_file("@%s", use_always = True)
    args.set_param_file_format("multiline")
    args.add("--x", "a b")
    ctx.actions.run_shell(outputs = [out], arguments = [args], command = "cat $1 > $@")
    return [DefaultInfo(files = depset([out]))]
r = rule(implementation = _impl)
`;
    const { ct } = run(defs);
    const params = ct.actions.find((a) => a.inProcess)!;
    expect(params.inProcess).toEqual({ kind: 'write', content: '--x\na b\n' });
    const shell = ct.actions.find((a) => !a.inProcess)!;
    expect(shell.argv.at(-1)).toBe(`@${params.outputs[0]!.execPath}`);
    expect(shell.inputs).toContainEqual(params.outputs[0]);
  });

  it('symlink: an in-process copy of its target, executable when asked', () => {
    const defs = RULE(
      'out = ctx.actions.declare_file("link.sh")\nctx.actions.symlink(output = out, target_file = ctx.file.src, is_executable = True)',
      '{"src": attr.label(allow_single_file = True)}',
    );
    const { ct } = run(defs, 'load(":defs.bzl", "r")\nr(name = "t", src = "a.sh")\n', { 't/a.sh': '' });
    expect(ct.actions[0]).toMatchObject({
      mnemonic: 'Symlink',
      argv: [],
      executableOutputs: true,
      inputs: [{ execPath: 't/a.sh' }],
      inProcess: { kind: 'symlink', target: 't/a.sh' },
    });
  });

  it('an output of another rule, or no outputs, is an error', () => {
    expect(errorOf(RULE('ctx.actions.run_shell(outputs = [], command = "true")'))).toContain("param 'outputs' may not be empty");
    expect(
      errorOf(
        RULE('ctx.actions.write(ctx.file.src, "x")', '{"src": attr.label(allow_single_file = True)}'),
        'load(":defs.bzl", "r")\nr(name = "t", src = "a.txt")\n',
        { 't/a.txt': '' },
      ),
    ).toContain("output 't/a.txt' is not a file declared by //t:t");
  });
});

describe('Starlark rule targets everywhere', () => {
  it('genrule srcs/tools, filegroup srcs and alias actual take them; tools in the exec configuration', () => {
    const defs = `
def _impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name + ".sh")
    ctx.actions.write(out, "#!/bin/sh\\necho made\\n", is_executable = True)
    return [DefaultInfo(executable = out, files = depset([out]))]
r = rule(implementation = _impl, executable = True)
`;
    const build = `load(":defs.bzl", "r")
r(name = "tool")
alias(name = "al", actual = ":tool")
filegroup(name = "fg", srcs = [":al"])
genrule(name = "g", srcs = [":fg"], tools = [":tool"], outs = ["g.txt"], cmd = "$(location :tool) $(location :fg) > $@")
`;
    const { ct } = run(defs, build, {}, '//t:g');
    const genrule = ct.actions.find((a) => a.mnemonic === 'Genrule')!;
    expect(genrule.argv[2]).toMatch(/bazel-out\/k8-opt-exec\/bin\/t\/tool\.sh bazel-out\/k8-fastbuild\/bin\/t\/tool\.sh > /);
  });
});

describe('declared outputs of every kind', () => {
  it('a declared directory or symlink no action makes is reported as any declared file is', () => {
    expect(errorOf(RULE('ctx.actions.declare_directory("d")'))).toContain('The following files have no generating action:\nt/d');
    expect(errorOf(RULE('ctx.actions.declare_symlink("s")'))).toContain('The following files have no generating action:\nt/s');
  });

  it("the executable an action makes gets the executable bit (Bazel's outputs are all 0555)", () => {
    const defs =
      'def _impl(ctx):\n    ctx.actions.run_shell(outputs = [ctx.outputs.executable], command = "echo > $1")\nr = rule(implementation = _impl, executable = True)\n';
    expect(run(defs).ct.actions[0]!.executableOutputs).toBe(true);
  });
});

describe('ctx values are frozen', () => {
  it('lists and dicts of ctx.attr cannot be changed', () => {
    const defs = RULE('ctx.attr.xs.append("z")', '{"xs": attr.string_list(default = ["a"])}');
    expect(errorOf(defs)).toContain('cannot append to frozen list');
    expect(errorOf(RULE('ctx.attr.d["k"] = "v"', '{"d": attr.string_dict()}'))).toContain('frozen');
  });
});

describe('native skylib-style settings', () => {
  it("provide bazel_skylib's BuildSettingInfo with the configuration's value", () => {
    const defs = `
load("@bazel_skylib//rules:common_settings.bzl", "BuildSettingInfo")
def _impl(ctx):
    print(ctx.attr.flag[BuildSettingInfo].value)
    return []
r = rule(implementation = _impl, attrs = {"flag": attr.label()})
`;
    const build = 'load(":defs.bzl", "r")\nstring_flag(name = "mode", build_setting_default = "fast")\nr(name = "t", flag = ":mode")\n';
    expect(run(defs, build).debug).toEqual(['fast']);
    expect(run(defs, build, {}, '//t:t', ['--//t:mode=slow']).debug).toEqual(['slow']);
  });
});

describe('declare_file(sibling = ...)', () => {
  it('beside a source file means the same directory under bin, never the source tree', () => {
    const defs = RULE(
      'f = ctx.actions.declare_file("x.out", sibling = ctx.file.src)\nctx.actions.write(f, "")\nprint(f.path, f.short_path)',
      '{"src": attr.label(allow_single_file = True)}',
    );
    const { debug } = run(defs, 'load(":defs.bzl", "r")\nr(name = "t", src = "sub/a.txt")\n', { 't/sub/a.txt': '' });
    expect(debug).toEqual(['bazel-out/k8-fastbuild/bin/t/sub/x.out t/sub/x.out']);
  });

  it("beside another package's file is Bazel's error, at the call", () => {
    const other = { 'o/BUILD': 'exports_files(["a.txt"])\n', 'o/a.txt': '' };
    const build = 'load(":defs.bzl", "r")\nr(name = "t", src = "//o:a.txt")\n';
    for (const method of ['declare_file', 'declare_directory', 'declare_symlink']) {
      const defs = RULE(`f = ctx.actions.${method}("x", sibling = ctx.file.src)`, '{"src": attr.label(allow_single_file = True)}');
      const message = errorOf(defs, build, other);
      expect(message).toContain(`${method}: the output artifact 'o/x' is not under package directory 't' for target '//t:t'`);
      expect(message).toMatch(/t\/defs\.bzl:2:\d+/);
    }
  });
});
