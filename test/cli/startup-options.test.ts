import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/index.js';
import { resolveStartupOptions, splitCommandLine, startupFlag, startupFlagsFromRc } from '../../src/cli/startup-options.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('splitCommandLine', () => {
  it('takes the startup options before the command, values after = or in the next word', () => {
    const split = splitCommandLine(['--output_base', '/ob', '--nohome_rc', '--bazelrc=a.rc', '--host_jvm_args', '-Xmx1g', 'build', '--jobs=1', '//t']);
    expect(split.startup.map((f) => f.text)).toEqual(['--output_base=/ob', '--nohome_rc', '--bazelrc=a.rc', '--host_jvm_args=-Xmx1g']);
    expect(split.command).toBe('build');
    expect(split.rest).toEqual(['--jobs=1', '//t']);
    expect(splitCommandLine(['--version']).command).toBe('--version');
  });

  it.each([
    [['--no_such', 'build'], "Unknown startup option: '--no_such'.\n  For more info, run 'kiln help startup_options'."],
    [
      ['--output_base'],
      "Startup option '--output_base' expects a value.\nUsage: '--output_base=somevalue' or '--output_base somevalue'.\n  For more info, run 'kiln help startup_options'.",
    ],
    [['--batch=1', 'build'], "In argument '--batch=1': option '--batch' does not take a value."],
    [['--nobatch=0', 'build'], "In argument '--nobatch=0': option '--nobatch' does not take a value."],
    [['--io_nice_level=8', 'build'], "Invalid argument to --io_nice_level: '8'. Must not exceed 7."],
    [['--io_nice_level=x', 'build'], "Invalid argument to --io_nice_level: 'x'. Must not exceed 7."],
    [['--max_idle_secs=-1', 'build'], "Invalid argument to --max_idle_secs: '-1'."],
    [['--digest_function=BLAKE3', 'build'], '--digest_function: this startup option is not supported by Kiln (Kiln hashes with SHA-256 only)'],
  ])('%j is an error in Bazel words', (argv, message) => {
    expect(() => splitCommandLine(argv)).toThrow(message);
  });
});

describe('startupFlagsFromRc', () => {
  it("reads startup lines' words as ProcessArgs does: a unary option without = takes the next word; each flag keeps its file and line", () => {
    const words = ['--output_user_root', '/r', '--nobatch', '--max_idle_secs=4'].map((option, i) => ({ option, source: '/ws/.bazelrc', line: i + 1 }));
    expect(startupFlagsFromRc(words).map((f) => [f.text, f.line])).toEqual([
      ['--output_user_root=/r', 1],
      ['--nobatch', 3],
      ['--max_idle_secs=4', 4],
    ]);
  });
});

describe('resolveStartupOptions', () => {
  it('later occurrences win; --bazelrc repeats, and /dev/null ignores the later ones; paths are absolute', () => {
    const flags = [
      '--nohome_rc',
      '--home_rc',
      '--nosystem_rc',
      '--bazelrc=a.rc',
      '--bazelrc=/b.rc',
      '--bazelrc=/dev/null',
      '--bazelrc=c.rc',
      '--output_user_root=r',
    ];
    const startup = resolveStartupOptions(
      flags.map((f) => startupFlag(f, undefined, undefined)),
      '/cwd',
    );
    expect(startup).toMatchObject({
      homeRc: true,
      systemRc: false,
      workspaceRc: true,
      bazelrcs: ['/cwd/a.rc', '/b.rc'],
      outputUserRoot: '/cwd/r',
      outputBase: undefined,
    });
  });
});

/** A workspace with one package, a home, and a cache dir, all in a temp dir; no system rc. */
function workspace(files: Record<string, string> = {}) {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'kiln-startup-')));
  dirs.push(base);
  const all: Record<string, string> = {
    'ws/WORKSPACE': '',
    'ws/pkg/BUILD': 'filegroup(name = "a", srcs = ["a.txt"])\nfilegroup(name = "b", srcs = [":a"])\n',
    'ws/pkg/a.txt': 'a\n',
    ...files,
  };
  mkdirSync(join(base, 'home'));
  for (const [p, text] of Object.entries(all)) {
    mkdirSync(dirname(join(base, p)), { recursive: true });
    writeFileSync(join(base, p), text);
  }
  const ws = join(base, 'ws');
  const kiln = async (args: string[]) => {
    let stdout = '';
    let stderr = '';
    const code = await runCli(
      args,
      {
        stdout: { write: (c) => (stdout += String(c)) },
        stderr: { write: (c) => (stderr += String(c)) },
        cwd: ws,
        env: { HOME: join(base, 'home'), XDG_CACHE_HOME: join(base, 'cache'), KILN_SYSTEM_BAZELRC: '', PATH: process.env.PATH },
      },
      'test',
    );
    return { code, stdout, stderr };
  };
  return { base, ws, kiln, md5: createHash('md5').update(ws).digest('hex') };
}

describe('startup options through kiln', () => {
  it('--output_user_root puts the output base under <root>/<md5 of the workspace path>, from the command line or a startup line; --output_base wins', async () => {
    const { base, ws, kiln, md5 } = workspace();
    expect(await kiln([`--output_user_root=${base}/root`, 'info', 'output_base'])).toMatchObject({ code: 0, stdout: `${base}/root/${md5}\n` });
    writeFileSync(join(ws, '.bazelrc'), `startup --output_user_root=${base}/rc-root\n`);
    expect(await kiln(['info', 'output_base'])).toMatchObject({ code: 0, stdout: `${base}/rc-root/${md5}\n` });
    // The command line's startup options come after the rc files' and win.
    expect((await kiln([`--output_user_root=${base}/root`, 'info', 'output_base'])).stdout).toBe(`${base}/root/${md5}\n`);
    expect((await kiln(['--output_base', `${base}/ob`, 'info', 'output_base'])).stdout).toBe(`${base}/ob\n`);
    writeFileSync(join(ws, '.bazelrc'), `startup --output_base=${base}/rc-ob\n`);
    expect((await kiln([`--output_user_root=${base}/root`, 'info', 'output_base'])).stdout).toBe(`${base}/rc-ob\n`);
  });

  it('the server and JVM options are accepted and do nothing; --announce_rc says so, one INFO line each', async () => {
    const { kiln, base, md5 } = workspace();
    const flags = [
      '--batch',
      '--max_idle_secs=3',
      '--host_jvm_args=-Xmx1g',
      '--host_jvm_args',
      '-Xss2m',
      '--host_jvm_debug',
      '--noblock_for_lock',
      '--io_nice_level=3',
    ];
    const quiet = await kiln([...flags, 'info', 'output_base']);
    expect(quiet).toEqual({ code: 0, stdout: `${base}/cache/kiln/${md5}\n`, stderr: '' });
    const announced = await kiln([...flags, 'info', '--announce_rc', 'output_base']);
    expect(announced.code).toBe(0);
    expect(announced.stderr.split('\n').filter((l) => l !== '')).toEqual(
      ['--batch', '--max_idle_secs=3', '--host_jvm_args=-Xmx1g', '--host_jvm_args=-Xss2m', '--host_jvm_debug', '--noblock_for_lock', '--io_nice_level=3'].map(
        (f) => `INFO: Startup option ${f} has no effect: Kiln runs no server (each command is its own process)`,
      ),
    );
  });

  it("an unknown startup option keeps Bazel's error (exit 2), on the command line or on a startup line", async () => {
    const { kiln, ws } = workspace();
    expect(await kiln(['--no_such_startup', 'build', '//pkg:a'])).toEqual({
      code: 2,
      stdout: '',
      stderr: "ERROR: Unknown startup option: '--no_such_startup'.\n  For more info, run 'kiln help startup_options'.\n",
    });
    writeFileSync(join(ws, '.bazelrc'), '# startup options\nstartup --no_such_startup\n');
    expect(await kiln(['query', '//pkg:a'])).toMatchObject({
      code: 2,
      stderr: `ERROR: ${ws}/.bazelrc:2: Unknown startup option: '--no_such_startup'.\n  For more info, run 'kiln help startup_options'.\n`,
    });
    const help = await kiln(['help', 'startup_options']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--output_user_root=<value>');
  });

  it('--bazelrc, --nohome_rc and the rest choose the rc files every workspace command reads: query with common + query lines', async () => {
    const { kiln, base, ws } = workspace({
      'home/.bazelrc': 'query --output=label_kind\n',
      'ws/.bazelrc': 'common --keep_going\nbuild --jobs=3\n',
      'extra.rc': 'query --output=build\n',
    });
    const labelKind = await kiln(['query', '//pkg:a']);
    expect(labelKind).toMatchObject({ code: 0, stdout: 'filegroup rule //pkg:a\n' });
    expect((await kiln(['--nohome_rc', 'query', '//pkg:a'])).stdout).toBe('//pkg:a\n');
    expect((await kiln([`--bazelrc=${base}/extra.rc`, 'query', '//pkg:a'])).stdout).toContain('filegroup(\n  name = "a"');
    const announced = await kiln(['query', '--announce_rc', '//pkg:a']);
    expect(announced.stderr).toContain(`INFO: Reading rc options for 'query' from ${ws}/.bazelrc:\n  Inherited 'common' options: --keep_going\n`);
    expect(announced.stderr).toContain(`INFO: Reading rc options for 'query' from ${base}/home/.bazelrc:\n  'query' options: --output=label_kind\n`);
    // An rc error is a usage error naming the file and line, never a stack trace.
    writeFileSync(join(ws, '.bazelrc'), 'query --config=missing\n');
    expect(await kiln(['query', '//pkg:a'])).toMatchObject({ code: 2, stderr: "ERROR: Config value 'missing' is not defined in any .rc file\n" });
  });

  it('clean reads the rc files too and takes the build options it inherits', async () => {
    const { kiln, ws } = workspace({ 'ws/.bazelrc': 'build --jobs=2\nclean --expunge\n' });
    const cleaned = await kiln(['clean', '--announce_rc']);
    expect(cleaned.code).toBe(0);
    expect(cleaned.stderr).toContain(`INFO: Reading rc options for 'clean' from ${ws}/.bazelrc:\n  Inherited 'build' options: --jobs=2\n`);
    expect(cleaned.stderr).toContain('INFO: Starting clean (this may take a while).');
    writeFileSync(join(ws, '.bazelrc'), 'build --no_such_build_flag\n');
    expect(await kiln(['clean'])).toMatchObject({ code: 2, stderr: `ERROR: ${ws}/.bazelrc:1: Unrecognized option: --no_such_build_flag\n` });
  });
});
