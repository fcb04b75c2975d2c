import { describe, expect, it } from 'vitest';
import { createConfigurations } from '../../../src/analysis/config/build-configuration.js';
import { Analyzer } from '../../../src/analysis/configured/analyzer.js';
import { LoadedTargetGraph } from '../../../src/analysis/configured/loaded-target-graph.js';
import { platformDeclarationsFrom } from '../../../src/analysis/configured/platform-declarations.js';
import { parseBuildOptions } from '../../../src/analysis/options/parse-build-options.js';
import { testTargetOf } from '../../../src/analysis/rules/test-runs.js';
import { workspaceFixture } from '../../loading/fixture.js';
import { newLoader } from '../../loading/load-helper.js';
import { LINUX_X64 } from '../config/config-fixture.js';

// A small analysistest in the manner of bazel-skylib's unittest.bzl: the rule under test's providers,
// or its AnalysisFailureInfo when the test expects it to fail (allow_analysis_failures set by
// analysis_test_transition, as skylib's `expect_failure` does).
const DEFS = `
Shape = provider(fields = ["sides"])

def _shape_impl(ctx):
    if ctx.attr.sides < 3:
        fail("a shape needs three sides, got %d" % ctx.attr.sides)
    return [Shape(sides = ctx.attr.sides)]

shape = rule(implementation = _shape_impl, attrs = {"sides": attr.int()})

def _wrap_impl(ctx):
    return [ctx.attr.dep[Shape]]

wrap = rule(implementation = _wrap_impl, attrs = {"dep": attr.label()})

def _sides_test_impl(ctx):
    got = ctx.attr.target_under_test[Shape].sides
    ok = got == ctx.attr.want
    return [AnalysisTestResultInfo(success = ok, message = "" if ok else "expected %d sides, got %d" % (ctx.attr.want, got))]

sides_test = rule(
    implementation = _sides_test_impl,
    analysis_test = True,
    attrs = {"target_under_test": attr.label(), "want": attr.int()},
)

_failing = analysis_test_transition(settings = {"//command_line_option:allow_analysis_failures": "True"})

def _failure_test_impl(ctx):
    # A list, as for every attribute with a Starlark transition (Bazel 4.2.3 and present-day Bazel alike).
    target = ctx.attr.target_under_test[0]
    causes = target[AnalysisFailureInfo].causes.to_list() if AnalysisFailureInfo in target else []
    found = [c for c in causes if ctx.attr.contains in c.message]
    labels = sorted([str(c.label) for c in causes])
    return [AnalysisTestResultInfo(success = bool(found), message = "causes: %s" % labels)]

failure_test = rule(
    implementation = _failure_test_impl,
    analysis_test = True,
    test = True,
    attrs = {"target_under_test": attr.label(cfg = _failing), "contains": attr.string()},
)

def _acting_test_impl(ctx):
    ctx.actions.write(ctx.actions.declare_file("x"), "")
    return [AnalysisTestResultInfo(success = True, message = "")]

acting_test = rule(implementation = _acting_test_impl, analysis_test = True)

def _writer_impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name + ".txt")
    ctx.actions.write(out, "hello")
    return [DefaultInfo(files = depset([out]))]

writer = rule(implementation = _writer_impl)

def _actions_test_impl(ctx):
    action = ctx.attr.target_under_test.actions[0]
    got = "%s %s %s %s" % (action.mnemonic, action.content, [f.short_path for f in action.outputs.to_list()], action.argv)
    return [AnalysisTestResultInfo(success = True, message = got)]

actions_test = rule(implementation = _actions_test_impl, analysis_test = True, attrs = {"target_under_test": attr.label()})

def _network_test_impl(ctx):
    script = ctx.actions.declare_file(ctx.label.name + ".sh")
    ctx.actions.write(script, "exit 0", is_executable = True)
    return [
        DefaultInfo(executable = script),
        testing.ExecutionInfo({"requires-network": "", "no-remote": ""}),
        RunEnvironmentInfo(environment = {"A": "1"}, inherited_environment = ["HOME_DIR"]),
    ]

network_test = rule(implementation = _network_test_impl, test = True)

OsInfo = provider(fields = ["min_os"])

def _os_reader_impl(ctx):
    return [OsInfo(min_os = ctx.fragments.cpp.minimum_os_version())]

os_reader = rule(implementation = _os_reader_impl, fragments = ["cpp"])

_min_os = analysis_test_transition(settings = {"//command_line_option:minimum_os_version": "1234.5678"})

def _os_test_impl(ctx):
    got = ctx.attr.target_under_test[0][OsInfo].min_os
    return [AnalysisTestResultInfo(success = got == "1234.5678", message = "min_os=%s" % got)]

os_test = rule(implementation = _os_test_impl, analysis_test = True, attrs = {"target_under_test": attr.label(cfg = _min_os)})

def _silent_test_impl(ctx):
    return []

silent_test = rule(implementation = _silent_test_impl, analysis_test = True)
`;

const FILES: Record<string, string> = {
  WORKSPACE: 'workspace(name = "at")\n',
  'rules/BUILD': '',
  'rules/defs.bzl': DEFS,
  't/BUILD': `
load("//rules:defs.bzl", "network_test", "os_reader", "os_test")
os_reader(name = "os_reader")
os_test(name = "os_test", target_under_test = ":os_reader")
network_test(name = "network_test")
load("//rules:defs.bzl", "acting_test", "actions_test", "failure_test", "shape", "sides_test", "silent_test", "wrap", "writer")
writer(name = "hello")
actions_test(name = "hello_actions_test", target_under_test = ":hello")
shape(name = "triangle", sides = 3)
shape(name = "line", sides = 2)
wrap(name = "wrapped_line", dep = ":line")
sides_test(name = "triangle_test", target_under_test = ":triangle", want = 3)
sides_test(name = "square_test", target_under_test = ":triangle", want = 4)
failure_test(name = "line_fails_test", target_under_test = ":wrapped_line", contains = "a shape needs three sides, got 2")
failure_test(name = "triangle_fails_test", target_under_test = ":triangle", contains = "sides")
acting_test(name = "acting_test")
silent_test(name = "silent_test")
`,
};

function analyzerFor(args: string[] = []) {
  const root = workspaceFixture(FILES);
  const graph = new LoadedTargetGraph(newLoader(root));
  const configurations = createConfigurations(parseBuildOptions(args).options, { host: LINUX_X64, platforms: platformDeclarationsFrom(graph) });
  return new Analyzer(graph, { configurations, buildSettings: (l) => graph.buildSetting(l) });
}

/** The test script an analysis test target stands for: its path and content. */
function script(label: string): { path: string; content: string; executable: boolean } {
  const ct = analyzerFor().analyzeTopLevel(label);
  const [action] = ct.actions;
  const work = action!.inProcess as { kind: string; content: string };
  expect(ct.executable?.artifact.execPath).toBe(action!.outputs[0]!.execPath);
  return { path: action!.outputs[0]!.execPath, content: work.content, executable: action!.executableOutputs === true };
}

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('no error');
}

describe('analysis tests', () => {
  it('writes a passing test as the script Bazel writes: exit 0, named after the target', () => {
    expect(script('//t:triangle_test')).toEqual({ path: 'bazel-out/k8-fastbuild/bin/t/triangle_test', content: 'echo \nexit 0', executable: true });
  });
  it('writes a failing test that prints its message, every character escaped', () => {
    expect(script('//t:square_test').content).toBe('echo \\e\\x\\p\\e\\c\\t\\e\\d\\ \\4\\ \\s\\i\\d\\e\\s\\,\\ \\g\\o\\t\\ \\3\nexit 1');
  });
  it('gives a test that expects failure the AnalysisFailureInfo of its target, causes propagated from dependencies', () => {
    expect(script('//t:line_fails_test').content).toBe(`${'echo '}${'causes: ["//t:line"]'.replace(/(.)/g, '\\$1')}\nexit 0`);
    // A target that analyses fine has no AnalysisFailureInfo: that test fails.
    expect(script('//t:triangle_fails_test').content.endsWith('exit 1')).toBe(true);
  });
  it('keeps the failing target an error without --allow_analysis_failures', () => {
    expect(errorOf(() => analyzerFor().analyzeTopLevel('//t:wrapped_line'))).toContain('a shape needs three sides, got 2');
  });
  it("sets a native option for the target under test with analysis_test_transition (skylib's change_setting_test)", () => {
    expect(script('//t:os_test').content.endsWith('exit 0')).toBe(true);
  });
  it("reads a target's registered actions through target.actions", () => {
    const content = script('//t:hello_actions_test').content;
    expect(content.replace(/\\(.)/g, '$1')).toBe('echo FileWrite hello ["t/hello.txt"] None\nexit 0');
  });
  it("puts a test rule's testing.ExecutionInfo and RunEnvironmentInfo on its test action", () => {
    const ct = analyzerFor().analyzeTopLevel('//t:network_test');
    const settings = {
      args: [],
      env: {},
      filter: '',
      timeouts: [],
      runsPerTest: 1,
      shardingDisabled: false,
      cacheResults: 'auto',
      workspaceName: 'at',
    } as const;
    const test = testTargetOf(ct, settings);
    const action = test.runs[0]!.action;
    expect(action.executionRequirements).toEqual(['no-remote', 'requires-network']);
    expect(action.env.A).toBe('1');
    expect(test.envInherit).toEqual(['HOME_DIR']);
  });
  it("refuses actions and a missing AnalysisTestResultInfo in Bazel's words", () => {
    expect(errorOf(() => analyzerFor().analyzeTopLevel('//t:acting_test'))).toContain(
      'implementation function of a rule with analysis_test=true may not register actions. Analysis test rules may only return success/failure information via AnalysisTestResultInfo.',
    );
    expect(errorOf(() => analyzerFor().analyzeTopLevel('//t:silent_test'))).toContain(
      'in silent_test rule //t:silent_test: rules with analysis_test=true must return an instance of AnalysisTestResultInfo',
    );
  });
  it('analyses the target under test of an expect-failure test in its own configuration', () => {
    const analyzer = analyzerFor();
    analyzer.analyzeTopLevel('//t:line_fails_test');
    expect(analyzer.actions().map((a) => a.outputs[0]!.execPath)).toEqual(['bazel-out/k8-fastbuild/bin/t/line_fails_test']);
  });
});
