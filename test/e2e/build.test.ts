import { existsSync, lstatSync, readlinkSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { E2eWorkspace, tempDir } from './e2e-workspace.js';

// The sandbox belongs to exec's tests; here actions run locally so the suite is fast and the
// same on every machine.
const LOCAL = '--spawn_strategy=local';

const CHAIN = {
  WORKSPACE: '',
  'tools/BUILD': `
genrule(
    name = "upper",
    srcs = ["upper.in"],
    outs = ["upper.sh"],
    cmd = "cp $< $@",
    executable = True,
    visibility = ["//visibility:public"],
)
`,
  'tools/upper.in': '#!/bin/bash\ncat "$@" | tr a-z A-Z\n',
  'lib/BUILD': `
filegroup(name = "words", srcs = ["a.txt", "b.txt"], visibility = ["//visibility:public"])
genrule(
    name = "split",
    srcs = ["a.txt", "b.txt"],
    outs = ["one.txt", "sub/dir/two.txt"],
    cmd = "cat $(location a.txt) > $(location one.txt); cat $(location b.txt) > $(location sub/dir/two.txt)",
    visibility = ["//visibility:public"],
)
genrule(
    name = "loud",
    srcs = [":words"],
    outs = ["loud.txt"],
    tools = ["//tools:upper"],
    cmd = "$(location //tools:upper) $(SRCS) > $@",
    visibility = ["//visibility:public"],
)
genrule(name = "lonely", srcs = ["c.txt"], outs = ["lonely.txt"], cmd = "cat $< > $@", visibility = ["//visibility:public"])
`,
  'lib/a.txt': 'alpha\n',
  'lib/b.txt': 'beta\n',
  'lib/c.txt': 'gamma\n',
  'app/BUILD': `
genrule(
    name = "all",
    srcs = ["//lib:split", "//lib:one.txt", "//lib:loud", "//lib:lonely"],
    outs = ["all.txt"],
    cmd = "cat $(locations //lib:split) $(location //lib:one.txt) $(location //lib:loud) $(location //lib:lonely) > $@",
)
alias(name = "short", actual = ":all")
`,
};

describe('kiln build', () => {
  it('runs a genrule command longer than the 64K command-line limit (through a script)', async () => {
    // 5,000 echo statements: about 100 KB of command, above the limit Bazel and Kiln write to a script.
    const lines = Array.from({ length: 5000 }, (_, i) => `echo line${i} >> $@`).join('; ');
    const ws = new E2eWorkspace({ WORKSPACE: '', 'pkg/BUILD': `genrule(name = "long", outs = ["long.txt"], cmd = ${JSON.stringify(lines)})\n` });
    expect(lines.length).toBeGreaterThan(64 * 1024);
    const run = await ws.kiln(['build', LOCAL, '//pkg:long']);
    expect(run.code).toBe(0);
    const out = ws.read('kiln-bin/pkg/long.txt').split('\n');
    expect(out[0]).toBe('line0');
    expect(out[4999]).toBe('line4999');
  });

  it('builds into kiln-bin (tool in the exec configuration, multi-output genrule whole and per file, outs in subfolders)', async () => {
    const ws = new E2eWorkspace(CHAIN);
    const run = await ws.kiln(['build', LOCAL, '//app:short']);
    expect(run.stderr).toMatch(/INFO: Analyzed 1 target \(\d+ packages? loaded, \d+ targets? configured\)\./);
    expect(run.code, run.stderr).toBe(0);
    expect(ws.read('kiln-bin/app/all.txt')).toBe('alpha\nbeta\nalpha\nALPHA\nBETA\ngamma\n');
    expect(ws.read('kiln-bin/lib/sub/dir/two.txt')).toBe('beta\n');
    expect(run.stderr).toContain('Target //app:short up-to-date:\n  kiln-bin/app/all.txt\n');
    expect(run.stderr).toContain('INFO: 5 processes: 5 local.\nINFO: Build completed successfully, 5 total actions\n');
    expect(run.executed).toEqual(['//app:all', '//lib:lonely', '//lib:loud', '//lib:split', '//tools:upper']);
    // The tool ran from the exec configuration's directory, which kiln-out shows.
    expect(existsSync(join(ws.root, 'kiln-out/k8-opt-exec/bin/tools/upper.sh'))).toBe(true);
    // Present-day Bazel's links: no genfiles link (--incompatible_skip_genfiles_symlink), and one to the execroot
    // named after the workspace directory.
    for (const link of ['kiln-bin', 'kiln-out', 'kiln-testlogs', `kiln-${basename(ws.root)}`])
      expect(lstatSync(join(ws.root, link)).isSymbolicLink()).toBe(true);
    expect(existsSync(join(ws.root, 'kiln-genfiles'))).toBe(false);
    expect(readlinkSync(join(ws.root, `kiln-${basename(ws.root)}`))).toMatch(/\/execroot\/__main__$/);
    expect(readlinkSync(join(ws.root, 'kiln-bin'))).toMatch(/^.*\/home\/\.cache\/kiln\/[0-9a-f]{32}\/execroot\/__main__\/bazel-out\/k8-fastbuild\/bin$/);
  });

  it('a second build runs nothing; a changed leaf reruns only its dependents', async () => {
    const ws = new E2eWorkspace(CHAIN);
    expect((await ws.kiln(['build', LOCAL, '//...'])).code).toBe(0);
    const again = await ws.kiln(['build', LOCAL, '//...']);
    expect(again.code).toBe(0);
    expect(again.executed).toEqual([]);
    expect(again.stderr).toContain('INFO: 0 processes.\n');
    ws.write({ 'lib/c.txt': 'delta\n' });
    const touched = await ws.kiln(['build', LOCAL, '//...']);
    expect(touched.code).toBe(0);
    expect(touched.executed).toEqual(['//app:all', '//lib:lonely']);
    expect(ws.read('kiln-bin/app/all.txt')).toContain('delta\n');
    // A changed command reruns its action.
    ws.write({ 'lib/BUILD': CHAIN['lib/BUILD'].replace('cat $< > $@', 'tac $< > $@') });
    expect((await ws.kiln(['build', LOCAL, '//lib:lonely'])).executed).toEqual(['//lib:lonely']);
  });

  it('--disk_cache shared by two checkouts: the second runs no process', async () => {
    const cache = tempDir();
    const first = new E2eWorkspace(CHAIN);
    const second = new E2eWorkspace(CHAIN);
    expect((await first.kiln(['build', LOCAL, `--disk_cache=${cache}`, '//app:all'])).code).toBe(0);
    const run = await second.kiln(['build', LOCAL, '--disk_cache', cache, '//app:all']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.executed).toEqual([]);
    expect(run.stderr).toContain('INFO: 5 processes: 5 disk cache hit.');
    expect(second.read('kiln-bin/app/all.txt')).toBe(first.read('kiln-bin/app/all.txt'));
  });

  it('negative patterns after --; a leading one without -- is a bad option, as in Bazel', async () => {
    const ws = new E2eWorkspace(CHAIN);
    const run = await ws.kiln(['build', LOCAL, '--', '//lib:all', '-//lib:loud', '-//lib:split']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.executed).toEqual(['//lib:lonely']);
    const bad = await ws.kiln(['build', '-//lib:loud']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('ERROR: Invalid options syntax: -//lib:loud');
  });

  it('--keep_going builds what it can past a missing target, and the build still fails', async () => {
    const ws = new E2eWorkspace(CHAIN);
    const stop = await ws.kiln(['build', LOCAL, '//lib:nope', '//lib:lonely']);
    expect(stop.code).toBe(1);
    expect(stop.executed).toEqual([]);
    const run = await ws.kiln(['build', LOCAL, '-k', '//lib:nope', '//lib:lonely']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("ERROR: no such target '//lib:nope': target 'nope' not declared in package 'lib'");
    expect(run.executed).toEqual(['//lib:lonely']);
    expect(run.stderr).toContain('ERROR: Build did NOT complete successfully');
    expect(run.stderr).not.toContain('Build completed successfully');
  });

  it('--subcommands prints each command before it runs; --jobs=1', async () => {
    const ws = new E2eWorkspace(CHAIN);
    const run = await ws.kiln(['build', LOCAL, '--subcommands', '--jobs=1', '//lib:lonely']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(
      /SUBCOMMAND: # \/\/lib:lonely \[action 'Executing genrule \/\/lib:lonely', mnemonic: Genrule\]\n.*cat lib\/c.txt > bazel-out\/k8-fastbuild\/bin\/lib\/lonely.txt/s,
    );
    expect(run.stderr).toMatch(/INFO: Elapsed time: \d+\.\d{3}s\nINFO: 1 process: 1 local\.\n/);
  });

  it('Ctrl-C stops the running action and exits 8 without outputs', async () => {
    const ws = new E2eWorkspace({ WORKSPACE: '', 'pkg/BUILD': 'genrule(name = "slow", outs = ["slow.txt"], cmd = "sleep 60; echo > $@")\n' });
    const started = Date.now();
    const run = await ws.kiln(['build', LOCAL, '//pkg:slow'], ws.root, (stderr) => stderr.includes('Executing genrule //pkg:slow'));
    expect(run.code).toBe(8);
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(existsSync(join(ws.root, 'kiln-bin/pkg/slow.txt'))).toBe(false);
  });

  it('--nobuild analyses only', async () => {
    const ws = new E2eWorkspace(CHAIN);
    const run = await ws.kiln(['build', '--nobuild', '//app:all']);
    expect(run.code).toBe(0);
    expect(run.executed).toEqual([]);
    expect(existsSync(join(ws.root, 'kiln-bin'))).toBe(false);
  });

  it('select() through --define and -c', async () => {
    const ws = new E2eWorkspace({
      WORKSPACE: '',
      'conf/BUILD': `
config_setting(name = "opt", values = {"compilation_mode": "opt"}, visibility = ["//visibility:public"])
config_setting(name = "loud", define_values = {"volume": "loud"}, visibility = ["//visibility:public"])
`,
      'pkg/BUILD': `
genrule(
    name = "g",
    outs = ["g.txt"],
    cmd = "echo " + select({"//conf:opt": "opt", "//conditions:default": "dev"}) + " " +
          select({"//conf:loud": "LOUD", "//conditions:default": "quiet"}) + " > $@",
)
`,
    });
    expect((await ws.kiln(['build', LOCAL, '//pkg:g'])).code).toBe(0);
    expect(ws.read('kiln-bin/pkg/g.txt')).toBe('dev quiet\n');
    const run = await ws.kiln(['build', LOCAL, '-c', 'opt', '--define', 'volume=loud', '//pkg:g']);
    expect(run.code, run.stderr).toBe(0);
    expect(ws.read('kiln-bin/pkg/g.txt')).toBe('opt LOUD\n');
    expect(readlinkSync(join(ws.root, 'kiln-bin'))).toMatch(/k8-opt\/bin$/);
  });

  it('.kilnrc: build lines apply to build and run, --config=name expands build:name, an unknown config exits 2', async () => {
    const ws = new E2eWorkspace({
      WORKSPACE: '',
      '.kilnrc': '# defaults\nbuild --spawn_strategy=local --define=volume=loud\nbuild:release -c opt\nrun:release --define "volume=quiet"\n',
      'conf/BUILD': 'config_setting(name = "opt", values = {"compilation_mode": "opt"})\nconfig_setting(name = "loud", define_values = {"volume": "loud"})\n',
      'pkg/BUILD': `
genrule(
    name = "g",
    outs = ["g.sh"],
    cmd = "echo echo " + select({"//conf:opt": "opt", "//conditions:default": "dev"}) + " " +
          select({"//conf:loud": "LOUD", "//conditions:default": "quiet"}) + " > $@",
    executable = True,
)
`,
    });
    ws.write({ 'conf/BUILD': ws.read('conf/BUILD').replaceAll(')', ', visibility = ["//visibility:public"])') });
    expect((await ws.kiln(['build', '//pkg:g'])).code).toBe(0);
    expect(ws.read('kiln-bin/pkg/g.sh')).toBe('echo dev LOUD\n');
    const release = await ws.kiln(['build', '--config=release', '//pkg:g']);
    expect(release.code, release.stderr).toBe(0);
    expect(ws.read('kiln-bin/pkg/g.sh')).toBe('echo opt LOUD\n');
    expect((await ws.kiln(['run', '--config', 'release', '//pkg:g'])).stdout).toBe('opt quiet\n');
    const unknown = await ws.kiln(['build', '--config=nope', '//pkg:g']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("ERROR: Config value 'nope' is not defined in any .rc file");
  });

  it('failing commands and pipelines fail the build with exit 1, show the message and leave no output', async () => {
    const ws = new E2eWorkspace({
      WORKSPACE: '',
      'pkg/BUILD': `
genrule(name = "fails", outs = ["f.txt"], cmd = "echo partial > $@; echo broken >&2; exit 3")
genrule(name = "pipe", outs = ["p.txt"], cmd = "false | cat > $@")
genrule(name = "ok", outs = ["ok.txt"], cmd = "echo ok > $@")
genrule(name = "forgets", outs = ["never.txt"], cmd = "true")
`,
    });
    const run = await ws.kiln(['build', LOCAL, '--keep_going', '--verbose_failures', '//pkg:all']);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /ERROR: \S*pkg\/BUILD:2:\d+: Executing genrule \/\/pkg:fails failed: \(Exit 3\): bash failed: error executing Genrule command \(from target \/\/pkg:fails\) \n[\s\S]*broken\nTarget \/\/pkg:fails failed to build/,
    );
    expect(run.stderr).toContain('never.txt');
    expect(run.stderr).toContain('ERROR: Build did NOT complete successfully');
    expect(run.stderr).toContain('exit 3');
    const bin = join(ws.root, 'kiln-bin/pkg');
    expect(existsSync(join(bin, 'f.txt'))).toBe(false);
    expect(existsSync(join(bin, 'p.txt'))).toBe(false);
    expect(ws.read('kiln-bin/pkg/ok.txt')).toBe('ok\n');
  });

  it('a bad flag exits 2; a BUILD error is reported at its line and column with exit 1', async () => {
    const ws = new E2eWorkspace({
      WORKSPACE: '',
      'pkg/BUILD': 'genrule(name = "x", outs = ["x"], cmd = "true")\nfilegroup(name = "y", srcs = [undefined_name])\n',
    });
    const bad = await ws.kiln(['build', '--no_such_flag', '//pkg:x']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('ERROR: Unrecognized option: --no_such_flag');
    const broken = await ws.kiln(['build', LOCAL, '//pkg:x']);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(/^ERROR: \S*pkg\/BUILD:2:\d+: .*undefined_name/m);
    expect(broken.stderr).toContain('ERROR: Build did NOT complete successfully');
  });

  it('outside a workspace: exit 2 with a message', async () => {
    const dir = tempDir();
    const ws = new E2eWorkspace({ WORKSPACE: '' });
    const run = await ws.kiln(['build', '//...'], dir);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("The 'build' command is only supported from within a workspace");
  });
});

describe('kiln run', () => {
  it('runs an executable genrule with the arguments after --, in its runfiles tree, with its exit code', async () => {
    const ws = new E2eWorkspace({
      WORKSPACE: '',
      'data.txt': 'from the workspace\n',
      'pkg/tool.in': '#!/bin/bash\necho args: "$@"\ncat "$BUILD_WORKSPACE_DIRECTORY/data.txt"\necho "in ${PWD#$(cd "$0.runfiles" && pwd)}"\n',
      'pkg/BUILD': `
genrule(name = "tool", srcs = ["tool.in"], outs = ["tool.sh"], cmd = "cp $< $@", executable = True)
genrule(name = "plain", outs = ["plain.txt"], cmd = "echo > $@")
`,
    });
    const run = await ws.kiln(['run', LOCAL, '//pkg:tool', '--', 'a b', 'c']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('args: a b c\nfrom the workspace\nin /__main__\n');
    expect(run.stderr).toContain('INFO: Running command line: kiln-bin/pkg/tool.sh a b c');
    expect(statSync(join(ws.root, 'kiln-bin/pkg/tool.sh')).mode & 0o111).not.toBe(0);
    const notExecutable = await ws.kiln(['run', LOCAL, '//pkg:plain']);
    expect(notExecutable.code).toBe(2);
    expect(notExecutable.stderr).toContain('Cannot run target //pkg:plain: Not executable');
  });

  it("passes the rule's args ($(location) expanded, split into words) before those after --, and its env", async () => {
    const ws = new E2eWorkspace({
      WORKSPACE: '',
      'pkg/data.txt': 'data\n',
      'pkg/show.sh': '#!/bin/sh\nfor a in "$@"; do echo "[$a]"; done\necho "LOC=$LOC"\n',
      'pkg/BUILD':
        'sh_binary(name = "show", srcs = ["show.sh"], data = ["data.txt"], args = ["$(location data.txt)", "\'a b\' c"], env = {"LOC": "$(rootpath data.txt) $(COMPILATION_MODE)"})\n',
    });
    const run = await ws.kiln(['run', LOCAL, '//pkg:show', '--', 'd']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('[pkg/data.txt]\n[a b]\n[c]\n[d]\nLOC=pkg/data.txt fastbuild\n');
  });

  it("returns the program's exit code", async () => {
    const ws = new E2eWorkspace({
      WORKSPACE: '',
      'pkg/t.in': '#!/bin/sh\nexit "$1"\n',
      'pkg/BUILD': 'genrule(name = "t", srcs = ["t.in"], outs = ["t.sh"], cmd = "cp $< $@", executable = True)\n',
    });
    expect((await ws.kiln(['run', LOCAL, '//pkg:t', '--', '7'])).code).toBe(7);
  });
});

describe('kiln clean and kiln info', () => {
  it('info names the output base; clean removes outputs and symlinks; --expunge the output base', async () => {
    const ws = new E2eWorkspace(CHAIN);
    const outputBase = (await ws.kiln(['info', 'output_base'])).stdout.trim();
    expect(outputBase.startsWith(join(ws.home, '.cache/kiln/'))).toBe(true);
    const all = (await ws.kiln(['info', '-c', 'opt'])).stdout;
    expect(all).toContain(`execution_root: ${outputBase}/execroot/__main__\n`);
    expect(all).toContain(`kiln-bin: ${outputBase}/execroot/__main__/bazel-out/k8-opt/bin\n`);
    expect(all).toContain(`workspace: ${ws.root}\n`);
    expect((await ws.kiln(['info', 'nope'])).code).toBe(2);

    expect((await ws.kiln(['build', LOCAL, '//lib:lonely'])).code).toBe(0);
    expect((await ws.kiln(['clean'])).code).toBe(0);
    expect(existsSync(join(ws.root, 'kiln-bin'))).toBe(false);
    expect(existsSync(join(outputBase, 'execroot'))).toBe(false);
    expect(existsSync(outputBase)).toBe(true);
    const rebuilt = await ws.kiln(['build', LOCAL, '//lib:lonely']);
    expect(rebuilt.executed).toEqual(['//lib:lonely']);
    expect((await ws.kiln(['clean', '--expunge'])).code).toBe(0);
    expect(existsSync(outputBase)).toBe(false);
    expect((await ws.kiln(['clean', '--bogus'])).code).toBe(2);
  });

  it('--output_base chooses the output base', async () => {
    const ws = new E2eWorkspace(CHAIN);
    const base = join(tempDir(), 'ob');
    expect((await ws.kiln(['build', LOCAL, `--output_base=${base}`, '//lib:lonely'])).code).toBe(0);
    expect(readlinkSync(join(ws.root, 'kiln-bin')).startsWith(`${base}/execroot/`)).toBe(true);
    expect((await ws.kiln(['info', '--output_base', base, 'output_base'])).stdout).toBe(`${base}\n`);
    // Before the command, as Bazel's startup option.
    expect((await ws.kiln([`--output_base=${base}`, 'info', 'output_base'])).stdout).toBe(`${base}\n`);
    expect((await ws.kiln(['--output_base', base, 'info', 'output_base'])).stdout).toBe(`${base}\n`);
    // Bazel's server and JVM startup options are accepted and do nothing (test/cli/startup-options.test.ts); an unknown one keeps Bazel's error.
    const unknown = await ws.kiln(['--no_such_startup_option', 'build', '//lib:lonely']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe("ERROR: Unknown startup option: '--no_such_startup_option'.\n  For more info, run 'kiln help startup_options'.\n");
  });
});
