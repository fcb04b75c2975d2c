import { describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/index.js';
import { analysisV2 } from '../../src/core/index.js';
import { E2eWorkspace } from './e2e-workspace.js';

const DEFS = `
MyInfo = provider(fields = ["value"])

def _impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name + ".out")
    ctx.actions.run_shell(
        inputs = ctx.files.srcs,
        tools = [ctx.executable._tool],
        outputs = [out],
        command = "cat $@ > " + out.path,
        arguments = [f.path for f in ctx.files.srcs],
        mnemonic = "MyConcat",
        progress_message = "Concatenating %s" % ctx.label,
    )
    return [DefaultInfo(files = depset([out])), MyInfo(value = ctx.attr.value)]

concat = rule(
    implementation = _impl,
    attrs = {
        "srcs": attr.label_list(allow_files = True),
        "value": attr.string(),
        "_tool": attr.label(default = "//tools:tool", executable = True, cfg = "exec"),
    },
)
`;

const FILES = {
  WORKSPACE: '',
  'tools/BUILD': 'sh_binary(name = "tool", srcs = ["tool.sh"], visibility = ["//visibility:public"])\n',
  'tools/tool.sh': '#!/bin/sh\n',
  'pkg/defs.bzl': DEFS,
  'pkg/BUILD': `load(":defs.bzl", "concat")
config_setting(name = "opt", values = {"compilation_mode": "opt"})
concat(name = "c", srcs = ["a.txt", ":gen"], value = select({":opt": "fast", "//conditions:default": "plain"}))
genrule(name = "gen", outs = ["gen.txt"], cmd = "echo hi > $@")
`,
  'pkg/a.txt': 'a\n',
};

/** Runs the CLI keeping stdout's bytes as written (the workspace helper keeps text). */
async function binaryRun(ws: E2eWorkspace, args: string[]): Promise<{ code: number; bytes: Buffer }> {
  const chunks: Buffer[] = [];
  const code = await runCli(
    args,
    {
      stdout: { write: (c) => chunks.push(Buffer.from(c)) > 0 },
      stderr: { write: () => true },
      cwd: ws.root,
      env: { HOME: ws.home, PATH: process.env.PATH },
      interrupted: new Promise<void>(() => {}),
    },
    'e2e',
  );
  return { code, bytes: Buffer.concat(chunks) };
}

describe('kiln cquery', () => {
  it("follows implicit dependencies (a Starlark rule's _tool, in the exec configuration) unless --noimplicit_deps", async () => {
    const ws = new E2eWorkspace(FILES);
    const all = await ws.kiln(['cquery', 'deps(//pkg:c)']);
    expect(all.code).toBe(0);
    const lines = all.stdout.trim().split('\n');
    const target = /\((\w+)\)$/.exec(lines[0]!)![1]!;
    expect(lines).toContain(`//pkg:gen (${target})`);
    expect(lines).toContain('//pkg:a.txt (null)');
    expect(lines).toContain(`//pkg:opt (${target})`);
    const tool = lines.find((l) => l.startsWith('//tools:tool '));
    expect(tool).toMatch(/^\/\/tools:tool \([0-9a-f]{7}\)$/);
    expect(tool).not.toContain(target);
    const explicit = await ws.kiln(['cquery', 'deps(//pkg:c)', '--noimplicit_deps']);
    expect(explicit.stdout).not.toContain('//tools:tool');
    expect(explicit.stdout).toContain('//pkg:opt');
    // --notool_deps leaves out what is reached through the exec configuration.
    expect((await ws.kiln(['cquery', 'deps(//pkg:c)', '--notool_deps'])).stdout).not.toContain('//tools:tool');
  });

  it('config() picks a configuration by name, id prefix or null', async () => {
    const ws = new E2eWorkspace(FILES);
    const all = (await ws.kiln(['cquery', 'deps(//pkg:c)'])).stdout;
    const execId = /^\/\/tools:tool \((\w+)\)$/m.exec(all)![1]!;
    expect((await ws.kiln(['cquery', `config(//tools:tool, ${execId})`, '--universe_scope=//pkg:c'])).stdout).toBe(`//tools:tool (${execId})\n`);
    expect((await ws.kiln(['cquery', 'config(//tools:tool, exec)', '--universe_scope=//pkg:c'])).stdout).toBe(`//tools:tool (${execId})\n`);
    // In the target configuration it is configured on demand, as Bazel does.
    const target = await ws.kiln(['cquery', 'config(//tools:tool, target)', '--universe_scope=//pkg:c']);
    expect(target.code).toBe(0);
    expect(target.stdout).toMatch(/^\/\/tools:tool \([0-9a-f]{7}\)\n$/);
    expect(target.stdout).not.toContain(execId);
    expect((await ws.kiln(['cquery', 'config(//pkg:a.txt, null)', '--universe_scope=//pkg:c'])).stdout).toBe('//pkg:a.txt (null)\n');
    const none = await ws.kiln(['cquery', 'config(//pkg:c, 0000000)']);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(
      "ERROR: Error doing post analysis query: Evaluation failed: No target (in) the expression given to config() could be found in the '0000000' configuration",
    );
  });

  it('-c opt changes the configuration, its id, and the select() branch --output=build shows; rc files apply (cquery inherits build)', async () => {
    const ws = new E2eWorkspace({ ...FILES, '.bazelrc': 'build -c opt\ncquery --output=build\n' });
    const run = await ws.kiln(['cquery', '//pkg:c']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('  value = "fast",\n');
    const plain = await ws.kiln(['--ignore_all_rc_files', 'cquery', '//pkg:c', '--output=build']);
    expect(plain.stdout).toContain('  value = "plain",\n');
    const ids = await Promise.all([
      ws.kiln(['--ignore_all_rc_files', 'cquery', '//pkg:c']),
      ws.kiln(['--ignore_all_rc_files', 'cquery', '//pkg:c', '-c', 'opt']),
      ws.kiln(['--ignore_all_rc_files', 'cquery', '//pkg:c', '-c', 'opt', '--output=label_kind']),
    ]);
    expect(ids[0]!.stdout).not.toBe(ids[1]!.stdout);
    // --output is no build option: the configuration id stays the same.
    expect(ids[2]!.stdout).toBe(`concat rule ${ids[1]!.stdout}`);
  });

  it('--output=starlark evaluates the expression with target bound; providers(target) lists the providers', async () => {
    const ws = new E2eWorkspace(FILES);
    const label = await ws.kiln(['cquery', '//pkg:c', '--output=starlark', '--starlark:expr=str(target.label) + " " + target.label.name']);
    expect(label).toMatchObject({ code: 0, stdout: '//pkg:c c\n' });
    const keys = await ws.kiln(['cquery', '//pkg:c', '--output=starlark', '--starlark:expr=sorted(providers(target).keys())']);
    expect(keys.stdout).toBe('["//pkg:defs.bzl%MyInfo", "DefaultInfo"]\n');
    const files = await ws.kiln([
      'cquery',
      'deps(//pkg:c, 1) - //pkg:opt',
      '--noimplicit_deps',
      '--output=starlark',
      '--starlark:expr=[f.basename for f in target.files.to_list()]',
    ]);
    expect(files.stdout.trim().split('\n').sort()).toEqual(['["a.txt"]', '["c.out"]', '["gen.txt"]']);
    const bad = await ws.kiln([
      'cquery',
      '//pkg:c + //pkg:a.txt',
      '--output=starlark',
      '--starlark:expr=target.files if target.label.name == "a.txt" else target.nope',
    ]);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toBe('depset([<source file pkg/a.txt>])\n');
    expect(bad.stderr).toContain('ERROR: Starlark evaluation error for //pkg:c: Target has no .nope field or method');
    ws.write({ 'fmt.star': 'def format(target):\n    return "%s has %d files" % (target.label.name, len(target.files.to_list()))\n' });
    expect(await ws.kiln(['cquery', '//pkg:c', '--output=starlark', '--starlark:file=fmt.star'])).toMatchObject({ code: 0, stdout: 'c has 1 files\n' });
    expect(await ws.kiln(['cquery', '//pkg:c', '--output=starlark', '--starlark:file=fmt.star', '--starlark:expr=1'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('You can only specify one of --starlark:expr or --starlark:file'),
    });
    expect((await ws.kiln(['cquery', '//pkg:c', '--output=starlark', '--starlark:file=none.star'])).code).toBe(2);
    // A malformed expression stops the output (Kiln's choice, not checked against Bazel: a query that cannot be evaluated, 7).
    expect(await ws.kiln(['cquery', '//pkg:c', '--output=starlark', '--starlark:expr=target.'])).toMatchObject({ code: 7 });
  });

  it('--output=transitions and the proto outputs', async () => {
    const ws = new E2eWorkspace(FILES);
    const lite = await ws.kiln(['cquery', '//pkg:c', '--output=transitions', '--transitions=lite']);
    expect(lite.code).toBe(0);
    expect(lite.stdout).toMatch(/^ {2}srcs#\/\/pkg:gen#NoTransition -> [0-9a-f]{7}$/m);
    const json = await ws.kiln(['cquery', 'deps(//pkg:c)', '--output=jsonproto']);
    const result = JSON.parse(json.stdout) as {
      results: { target: { rule?: { name: string }; sourceFile?: { name: string } }; configurationId?: number }[];
      configurations: { id: number; isTool?: boolean; mnemonic: string }[];
    };
    expect(result.results.map((r) => r.target.rule?.name ?? r.target.sourceFile?.name)).toContain('//pkg:c');
    expect(result.configurations.some((c) => c.isTool === true)).toBe(true);
    expect(result.results.find((r) => r.target.sourceFile)?.configurationId).toBeUndefined();
    const proto = await binaryRun(ws, ['cquery', 'deps(//pkg:c)', '--output=proto']);
    expect(proto.code).toBe(0);
    const decoded = analysisV2.CqueryResult.decode(proto.bytes);
    expect(decoded.results.map((r) => r.target?.rule?.name ?? r.target?.sourceFile?.name)).toEqual(
      result.results.map((r) => r.target.rule?.name ?? r.target.sourceFile?.name),
    );
    const text = await ws.kiln(['cquery', '//pkg:c', '--output=textproto']);
    expect(text.stdout).toMatch(/^results \{\n {2}target \{\n {4}type: RULE\n/);
    expect(text.stdout).toContain('  configuration_id: 1\n');
  });

  it("errors in Bazel's words and exit codes", async () => {
    const ws = new E2eWorkspace(FILES);
    expect(await ws.kiln(['cquery', 'deps('])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("ERROR: Error while parsing 'deps(': premature end of input"),
    });
    expect(await ws.kiln(['cquery', '//pkg:c', '--output=xml'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining(
        "ERROR: Invalid output format 'xml'. Valid values are: label, label_kind, build, transitions, proto, jsonproto, textproto, starlark",
      ),
    });
    expect(await ws.kiln(['cquery', '//pkg:c', '--output=transitions'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("Instead of using --output=transitions, set the --transitions flag explicitly to 'lite' or 'full'"),
    });
    expect(await ws.kiln(['cquery'])).toMatchObject({ code: 2, stderr: expect.stringContaining('missing query expression') });
    expect(await ws.kiln(['cquery', 'buildfiles(//pkg:c)'])).toMatchObject({
      code: 1,
      stderr: expect.stringContaining("Error doing post analysis query: Evaluation failed: buildfiles() doesn't make sense for the configured target graph"),
    });
    const missing = await ws.kiln(['cquery', '//pkg:nope']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("no such target '//pkg:nope'");
  });
});

describe('kiln aquery', () => {
  it('text: the actions of the matched targets, filtered by mnemonic, inputs and outputs', async () => {
    const ws = new E2eWorkspace(FILES);
    const run = await ws.kiln(['aquery', 'deps(//pkg:c)']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("action 'Concatenating //pkg:c'\n  Mnemonic: MyConcat\n  Target: //pkg:c\n  Configuration: k8-fastbuild\n");
    expect(run.stdout).toMatch(/^ {2}ActionKey: [0-9a-f]{64}$/m);
    expect(run.stdout).toContain("action 'Executing genrule //pkg:gen'\n  Mnemonic: Genrule\n");
    const only = await ws.kiln(['aquery', 'mnemonic("MyConcat", deps(//pkg:c))']);
    expect(only.stdout.match(/^action /gm)).toHaveLength(1);
    expect(only.stdout).toContain('Command Line: (exec /bin/bash \\\n    -c \\\n');
    // The pattern matches the whole path, as Bazel's.
    expect((await ws.kiln(['aquery', 'inputs("a.txt", deps(//pkg:c))'])).stdout).toBe('');
    expect((await ws.kiln(['aquery', 'inputs(".*/a.txt|pkg/a.txt", deps(//pkg:c))'])).stdout.match(/^action /gm)).toHaveLength(1);
    const outputs = await ws.kiln(['aquery', 'outputs(".*gen.txt", deps(//pkg:c))']);
    expect(outputs.stdout).toContain('Target: //pkg:gen');
    expect(outputs.stdout).not.toContain('Target: //pkg:c');
    const short = await ws.kiln(['aquery', '//pkg:c', '--noinclude_commandline', '--noinclude_artifacts']);
    expect(short.stdout).not.toContain('Command Line');
    expect(short.stdout).not.toContain('Inputs:');
  });

  it('the action key follows what the action does', async () => {
    const ws = new E2eWorkspace(FILES);
    const key = async () => /ActionKey: (\w+)/.exec((await ws.kiln(['aquery', '//pkg:gen'])).stdout)![1];
    const before = await key();
    expect(await key()).toBe(before);
    ws.write({ 'pkg/BUILD': FILES['pkg/BUILD'].replace('echo hi', 'echo ho') });
    expect(await key()).not.toBe(before);
  });

  it('summary, jsonproto, textproto and proto (analysis_v2 ActionGraphContainer)', async () => {
    const ws = new E2eWorkspace(FILES);
    const summary = await ws.kiln(['aquery', 'deps(//pkg:c)', '--noimplicit_deps', '--output=summary']);
    expect(summary.stdout).toBe(
      '2 total actions.\n\nMnemonics:\n  Genrule: 1\n  MyConcat: 1\n\nConfigurations:\n  k8-fastbuild: 2\n\nExecution Platforms:\n  @local_config_platform//:host: 2\n\n',
    );
    const proto = await binaryRun(ws, ['aquery', '//pkg:c', '--output=proto']);
    expect(proto.code).toBe(0);
    const json = await ws.kiln(['aquery', '//pkg:c', '--output=jsonproto']);
    const decoded = analysisV2.ActionGraphContainer.decode(proto.bytes);
    const parsed = JSON.parse(json.stdout) as { actions: { mnemonic: string; actionKey: string }[] };
    expect(decoded.actions.map((a) => a.mnemonic)).toEqual(['MyConcat']);
    expect(parsed.actions[0]!.actionKey).toBe(decoded.actions[0]!.actionKey);
    expect(decoded.targets[0]!.label).toBe('//pkg:c');
    expect(decoded.ruleClasses[0]!.name).toBe('concat');
    const text = await ws.kiln(['aquery', '//pkg:c', '--output=textproto']);
    expect(text.stdout).toContain('actions {\n  target_id: 1\n');
    expect(text.stdout).toContain('  mnemonic: "MyConcat"\n');
    expect(text.stdout).toMatch(/path_fragments \{\n {2}id: \d+\n {2}label: "c.out"\n {2}parent_id: \d+\n\}/);
  });
});
