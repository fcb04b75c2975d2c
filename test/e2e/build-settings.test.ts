import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { E2eWorkspace, filesBelow } from './e2e-workspace.js';

const LOCAL = '--spawn_strategy=local';
const DIR = join(import.meta.dirname, '../analysis/starlark/bazel-2.1.0-settings');

// The recorded workspace's config_settings have only flag_values: valid, as in Bazel.
const files = (): Record<string, string> => filesBelow(join(DIR, 'workspace'));

/** One recorded Bazel 2.1.0 run: its DEBUG messages (positions dropped), errors, exit code and outputs. */
function recordedRun(n: number) {
  const lines = readFileSync(join(DIR, `r${n}.recorded.txt`), 'utf8').split('\n');
  const outputs = new Map<string, string>();
  const start = lines.findIndex((l) => l.startsWith('== '));
  if (start >= 0) for (let i = start; i < lines.length - 1; i += 2) outputs.set(lines[i]!.slice(3).replace('bazel-bin/', 'kiln-bin/'), `${lines[i + 1]}\n`);
  return {
    debug: lines.filter((l) => l.startsWith('DEBUG: ')).map((l) => l.replace(/^DEBUG: flags\/defs\.bzl:\d+:\d+: /, '')),
    errors: lines.filter((l) => l.startsWith('ERROR: ')),
    code: Number(/^rc=(\d+)/m.exec(lines.join('\n'))![1]),
    outputs,
  };
}

/** The DEBUG messages of the rules' implementations (Bazel analyses in another order). */
const debugOf = (stderr: string) =>
  stderr
    .split('\n')
    .filter((l) => l.startsWith('DEBUG: flags/defs.bzl:'))
    .map((l) => l.replace(/^DEBUG: flags\/defs\.bzl:\d+:\d+: /, ''));

describe('build settings against Bazel 2.1.0', () => {
  it.each([
    [1, [] as string[]],
    [2, ['--//flags:color=blue', '--//flags:fast', '--//flags:count=2', '--//flags:names=b,c', '--//flags:impl=//flags:b_impl']],
  ])('run %i: values, select() on flag_values, label_flag', async (n, flags) => {
    const bazel = recordedRun(n);
    const ws = new E2eWorkspace(files());
    const run = await ws.kiln(['build', LOCAL, ...flags, '//flags:s', '//flags:g']);
    expect(run.code, run.stderr).toBe(bazel.code);
    expect(debugOf(run.stderr).sort()).toEqual([...bazel.debug].sort());
    for (const [path, content] of bazel.outputs) expect(ws.read(path), path).toBe(content);
  });

  it('rc files set flags (run 10: .bazelrc there, .kilnrc here)', async () => {
    const bazel = recordedRun(10);
    const ws = new E2eWorkspace({ ...files(), '.kilnrc': 'build --//flags:color=blue\n' });
    const run = await ws.kiln(['build', LOCAL, '//flags:s']);
    expect(run.code, run.stderr).toBe(0);
    expect(ws.read('kiln-bin/flags/s.txt')).toBe(bazel.outputs.get('kiln-bin/flags/s.txt'));
  });

  it.each([4, 5, 6, 7])("run %i: a bad flag is an error in Bazel's words", async (n) => {
    const bazel = recordedRun(n);
    const flag = /^# Bazel 2\.1\.0: bazel build (\S+)/.exec(readFileSync(join(DIR, `r${n}.recorded.txt`), 'utf8'))![1]!;
    const ws = new E2eWorkspace(files());
    const run = await ws.kiln(['build', LOCAL, flag, '//flags:s']);
    expect(run.code).toBe(bazel.code);
    expect(run.stderr).toContain(bazel.errors.at(-1)!);
  });

  it('--no//pkg:flag sets a boolean flag to false as Bazel 4.2.3 does (2.1.0 rejected the form, run 3)', async () => {
    const bazel4 = readFileSync(join(DIR, '../bazel-4.2.3-settings/r1.recorded.txt'), 'utf8');
    const ws = new E2eWorkspace(files());
    const run = await ws.kiln(['build', LOCAL, '--//flags:fast', '--no//flags:fast', '//flags:s']);
    expect(run.code, run.stderr).toBe(0);
    expect(`${ws.read('kiln-bin/flags/s.txt')}`).toBe(bazel4.slice(bazel4.indexOf('== bazel-bin/flags/s.txt\n') + 25));
    expect(recordedRun(3).errors).toEqual(['ERROR: Unrecognized option: --no//flags:fast']);
  });

  it("--no on a non-boolean flag: Bazel 4.2.3's message and exit code 2", async () => {
    const bazel4 = readFileSync(join(DIR, '../bazel-4.2.3-settings/r2.recorded.txt'), 'utf8').split('\n');
    const ws = new E2eWorkspace(files());
    const run = await ws.kiln(['build', LOCAL, '--no//flags:color', '//flags:s']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(bazel4.find((l) => l.startsWith('ERROR: '))!);
    expect(bazel4).toContain('rc=2');
  });

  it('a bare non-boolean flag takes the next word as its value (run 9)', async () => {
    const ws = new E2eWorkspace(files());
    const run = await ws.kiln(['build', LOCAL, '--//flags:color', 'blue', '//flags:s']);
    expect(run.code, run.stderr).toBe(0);
    expect(ws.read('kiln-bin/flags/s.txt')).toBe('blue,slow,not-two,no-b\n');
  });

  it('flag_values on a label_flag: the expected label is relative to the config_setting', async () => {
    const ws = new E2eWorkspace({
      ...files(),
      'flags/extra/BUILD': `config_setting(name = "uses_b", values = {"compilation_mode": "fastbuild"}, flag_values = {"//flags:impl": "//flags:b_impl"})
config_setting(name = "uses_b_rel", values = {"compilation_mode": "fastbuild"}, flag_values = {"//flags:impl": ":b_impl"})
genrule(name = "which", outs = ["which.txt"], cmd = "echo " + select({":uses_b": "b", "//conditions:default": "a"}) + select({":uses_b_rel": "-rel", "//conditions:default": ""}) + " > $@")
`,
    });
    expect((await ws.kiln(['build', LOCAL, '//flags/extra:which'])).code).toBe(0);
    expect(ws.read('kiln-bin/flags/extra/which.txt')).toBe('a\n');
    const b = await ws.kiln(['build', LOCAL, '--//flags:impl=//flags:b_impl', '//flags/extra:which']);
    expect(b.code, b.stderr).toBe(0);
    expect(ws.read('kiln-bin/flags/extra/which.txt')).toBe('b\n');
  });

  it('a changed value is a new configuration: analysis runs again, the output is rebuilt', async () => {
    const ws = new E2eWorkspace(files());
    expect((await ws.kiln(['build', LOCAL, '//flags:s'])).code).toBe(0);
    const blue = await ws.kiln(['build', LOCAL, '--//flags:color=blue', '//flags:s']);
    expect(debugOf(blue.stderr)).toContain('setting //flags:color = "blue"');
    expect(ws.read('kiln-bin/flags/s.txt')).toBe('blue,slow,not-two,no-b\n');
    // Set explicitly to its default, the flag matches as its default does.
    expect((await ws.kiln(['build', LOCAL, '--//flags:color=red', '//flags:s'])).code).toBe(0);
    expect(ws.read('kiln-bin/flags/s.txt')).toBe('red,slow,not-two,no-b\n');
    const back = await ws.kiln(['build', LOCAL, '//flags:s']);
    expect(ws.read('kiln-bin/flags/s.txt')).toBe('red,slow,not-two,no-b\n');
    expect(back.code).toBe(0);
  });
});
