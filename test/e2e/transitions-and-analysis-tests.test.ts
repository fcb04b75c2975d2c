import { describe, expect, it } from 'vitest';
import { E2eWorkspace } from './e2e-workspace.js';

const LOCAL = '--spawn_strategy=local';

const FILES: Record<string, string> = {
  WORKSPACE: 'workspace(name = "e2e_tr")\n',
  'flags/BUILD': `
load("@bazel_skylib//rules:common_settings.bzl", "string_flag")
string_flag(name = "flavor", build_setting_default = "plain", visibility = ["//visibility:public"])
config_setting(name = "is_chocolate", flag_values = {":flavor": "chocolate"})
`,
  'rules/BUILD': '',
  'rules/defs.bzl': `
def _split_impl(settings, attr):
    return {"chocolate": {"//flags:flavor": "chocolate"}, "vanilla": {"//flags:flavor": "vanilla"}}

split_transition = transition(implementation = _split_impl, inputs = [], outputs = ["//flags:flavor"])

def _collect_impl(ctx):
    files = [f for d in ctx.attr.dep for f in d[DefaultInfo].files.to_list()]
    out = ctx.actions.declare_file(ctx.label.name + ".txt")
    lines = ["%s=%s" % (k, ctx.split_attr.dep[k][DefaultInfo].files.to_list()[0].path) for k in sorted(ctx.split_attr.dep.keys())]
    ctx.actions.write(out, "\\n".join(lines) + "\\n")
    return [DefaultInfo(files = depset([out] + files))]

collect = rule(implementation = _collect_impl, attrs = {"dep": attr.label(cfg = split_transition)})

def _check_impl(ctx):
    ok = ctx.attr.value == ctx.attr.want
    return [AnalysisTestResultInfo(success = ok, message = "value %s, want %s" % (ctx.attr.value, ctx.attr.want))]

check_test = rule(implementation = _check_impl, analysis_test = True, attrs = {"value": attr.string(), "want": attr.string()})

def _env_test_impl(ctx):
    script = ctx.actions.declare_file(ctx.label.name + ".sh")
    ctx.actions.write(script, '[ "$GREETING" = hi ] && [ "$KILN_E2E_INHERITED" = from-client ] && [ -z "$NOT_INHERITED" ]\\n', is_executable = True)
    return [
        DefaultInfo(executable = script),
        RunEnvironmentInfo(environment = {"GREETING": "hi"}, inherited_environment = ["KILN_E2E_INHERITED"]),
        testing.ExecutionInfo({"requires-network": ""}),
    ]

env_test = rule(implementation = _env_test_impl, test = True)
`,
  'app/BUILD': `
load("//rules:defs.bzl", "check_test", "collect", "env_test")
env_test(name = "env_test")
genrule(
    name = "pick",
    outs = ["pick.txt"],
    cmd = select({"//flags:is_chocolate": "echo choc > $@", "//conditions:default": "echo other > $@"}),
)
collect(name = "both", dep = ":pick")
check_test(name = "good_test", value = "a", want = "a")
check_test(name = "bad_test", value = "a", want = "b")
`,
};

describe('transitions and analysis tests through the CLI', () => {
  it('builds a split dependency in two configurations, each in its ST- directory, select() resolved in each', async () => {
    const ws = new E2eWorkspace(FILES);
    const run = await ws.kiln(['build', LOCAL, '//app:both']);
    expect(run.code, run.stderr).toBe(0);
    // The hashes Bazel 4.2.3 gives these two configurations (and present-day Bazel: one option differs from the top level).
    expect(ws.read('kiln-bin/app/both.txt')).toBe(
      'chocolate=bazel-out/k8-fastbuild-ST-c3676c3bb40d/bin/app/pick.txt\nvanilla=bazel-out/k8-fastbuild-ST-6084263ae57f/bin/app/pick.txt\n',
    );
    expect(ws.read('kiln-out/k8-fastbuild-ST-c3676c3bb40d/bin/app/pick.txt')).toBe('choc\n');
    expect(ws.read('kiln-out/k8-fastbuild-ST-6084263ae57f/bin/app/pick.txt')).toBe('other\n');
    // Reused from the output base, the split targets keep their configurations apart.
    const again = await ws.kiln(['build', LOCAL, '//app:both']);
    expect(again.code, again.stderr).toBe(0);
    expect(ws.read('kiln-bin/app/both.txt')).toContain('chocolate=bazel-out/k8-fastbuild-ST-c3676c3bb40d/bin/app/pick.txt');
    // An edit of one branch reaches the configuration that selects it, and only that one.
    ws.write({ 'app/BUILD': FILES['app/BUILD']!.replace('echo choc', 'echo dark chocolate') });
    const edited = await ws.kiln(['build', LOCAL, '//app:both']);
    expect(edited.code, edited.stderr).toBe(0);
    expect(ws.read('kiln-out/k8-fastbuild-ST-c3676c3bb40d/bin/app/pick.txt')).toBe('dark chocolate\n');
    expect(ws.read('kiln-out/k8-fastbuild-ST-6084263ae57f/bin/app/pick.txt')).toBe('other\n');
    // An edit of the transition makes other configurations; the stored targets of the old ones are not reused for them.
    ws.write({ 'rules/defs.bzl': FILES['rules/defs.bzl']!.replace('"vanilla": {"//flags:flavor": "vanilla"}', '"vanilla": {"//flags:flavor": "chocolate"}') });
    const split = await ws.kiln(['build', LOCAL, '//app:both']);
    expect(split.code, split.stderr).toBe(0);
    expect(ws.read('kiln-bin/app/both.txt')).toBe('chocolate=bazel-out/k8-fastbuild-ST-c3676c3bb40d/bin/app/pick.txt\n');
  });

  it('kiln test passes and fails analysis tests from their AnalysisTestResultInfo', async () => {
    const ws = new E2eWorkspace(FILES);
    const run = await ws.kiln(['test', LOCAL, '--test_output=errors', '//app:good_test', '//app:bad_test']);
    expect(run.code, run.stderr).toBe(3);
    expect(run.stdout + run.stderr).toMatch(/\/\/app:good_test\s+PASSED/);
    expect(run.stdout + run.stderr).toMatch(/\/\/app:bad_test\s+FAILED/);
    expect(ws.read('kiln-testlogs/app/bad_test/test.log')).toContain('value a, want b');
  });

  it("gives a Starlark test RunEnvironmentInfo's environment and inherited names", async () => {
    const ws = new E2eWorkspace(FILES);
    const env = { KILN_E2E_INHERITED: 'from-client', NOT_INHERITED: 'x' };
    const run = await ws.kiln(['test', LOCAL, '--test_output=errors', '//app:env_test'], ws.root, undefined, undefined, env);
    expect(run.code, run.stdout + run.stderr).toBe(0);
  });
});
