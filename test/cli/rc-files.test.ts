import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applyRcFiles, type RcSettings } from '../../src/cli/rc-file.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/**
 * A workspace (`ws/`), a home (`home/`) and a system rc (`etc/bazel.bazelrc`) in a temp dir, with
 * the given files (paths relative to the temp dir). The system rc path goes through the env, so no
 * test reads the real /etc.
 */
function setup(files: Record<string, string>) {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'kiln-rc-')));
  dirs.push(base);
  for (const d of ['ws', 'home', 'etc']) mkdirSync(join(base, d));
  writeFileSync(join(base, 'ws', 'WORKSPACE'), '');
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(dirname(join(base, p)), { recursive: true });
    writeFileSync(join(base, p), text);
  }
  const ws = join(base, 'ws');
  let stderr = '';
  const io = {
    env: { HOME: join(base, 'home'), KILN_SYSTEM_BAZELRC: join(base, 'etc', 'bazel.bazelrc') } as Record<string, string | undefined>,
    cwd: ws,
    stderr: { write: (s: string | Uint8Array) => (stderr += String(s)) },
  };
  const apply = (command: string, args: string[] = [], settings?: RcSettings) => applyRcFiles(command, args, ws, io, settings);
  return { base, ws, io, apply, stderr: () => stderr };
}

describe('which rc files, in which order', () => {
  it('reads the system rc, %workspace%/.bazelrc, ~/.bazelrc, each --bazelrc (up to /dev/null), then .kilnrc (workspace, home): later files come later', async () => {
    const { base, apply } = setup({
      'etc/bazel.bazelrc': 'build --define=n=system\n',
      'ws/.bazelrc': 'build --define=n=workspace\n',
      'home/.bazelrc': 'build --define=n=home\n',
      'x.rc': 'build --define=n=x\n',
      'y.rc': 'build --define=n=y\n',
      'z.rc': 'build --define=n=z\n',
      'ws/.kilnrc': 'build --define=n=ws-kilnrc\n',
      'home/.kilnrc': 'build --define=n=home-kilnrc\n',
    });
    const rcs = [`--bazelrc=${base}/x.rc`, `--bazelrc=${base}/y.rc`, '--bazelrc=/dev/null', `--bazelrc=${base}/z.rc`];
    expect(await apply('build', [...rcs, '//t'])).toEqual([
      '--define=n=system',
      '--define=n=workspace',
      '--define=n=home',
      '--define=n=x',
      '--define=n=y',
      '--define=n=ws-kilnrc',
      '--define=n=home-kilnrc',
      '//t',
    ]);
    expect(await apply('build', ['--nosystem_rc', '--noworkspace_rc', '--nohome_rc', `--bazelrc=${base}/z.rc`])).toEqual(['--define=n=z']);
    expect(await apply('build', ['--ignore_all_rc_files', `--bazelrc=${base}/z.rc`])).toEqual([]);
  });

  it('$BAZELRC files come after ~/.bazelrc; a --bazelrc or $BAZELRC file that cannot be read is an error in Bazel words', async () => {
    const { base, io, apply } = setup({ 'home/.bazelrc': 'build --define=n=home\n', 'x.rc': 'build --define=n=x\n', 'y.rc': 'build --define=n=y\n' });
    io.env.BAZELRC = `${base}/x.rc,${base}/y.rc`;
    expect(await apply('build')).toEqual(['--define=n=home', '--define=n=x', '--define=n=y']);
    delete io.env.BAZELRC;
    await expect(apply('build', ['--bazelrc=nope.rc'])).rejects.toThrow(`Error: Unable to read .bazelrc file '${base}/ws/nope.rc'.`);
  });

  it('groups by command, not by file: every common line, then every build line, then the command own (Bazel parses rc options command by command)', async () => {
    const { apply } = setup({
      'ws/.bazelrc': 'test --test_output=errors\nbuild --jobs=2 # a comment\n# build --ignored\ncommon --keep_going\n',
      'home/.bazelrc': 'common --nokeep_going\nbuild --jobs=3\n',
    });
    expect(await apply('test', ['--jobs=4', '//t'])).toEqual([
      '--keep_going',
      '--nokeep_going',
      '--jobs=2',
      '--jobs=3',
      '--test_output=errors',
      '--jobs=4',
      '//t',
    ]);
    expect(await apply('build')).toEqual(['--keep_going', '--nokeep_going', '--jobs=2', '--jobs=3']);
    // run, info and clean inherit build (Bazel's @Command annotations); query only common and query.
    expect(await apply('run')).toEqual(['--keep_going', '--nokeep_going', '--jobs=2', '--jobs=3']);
    expect(await apply('info')).toEqual(['--keep_going', '--nokeep_going', '--jobs=2', '--jobs=3']);
    expect(await apply('clean')).toEqual(['--keep_going', '--nokeep_going', '--jobs=2', '--jobs=3']);
    expect(await apply('query')).toEqual(['--keep_going', '--nokeep_going']);
  });
});

describe('rc file syntax', () => {
  it('quotes, backslash escapes, continuation lines, # comments, ${VAR} from the environment', async () => {
    const { io, apply } = setup({
      'ws/.bazelrc': 'build --define "a=b c" \\\n  --define=d=\'e f\' # trailing\nbuild --define=h=${KILN_TEST_VAR} --define=u=${UNSET_VAR} --define=s=x\\ y\n',
    });
    io.env.KILN_TEST_VAR = 'from-env';
    expect(await apply('build')).toEqual(['--define', 'a=b c', '--define=d=e f', '--define=h=from-env', '--define=u=${UNSET_VAR}', '--define=s=x y']);
  });

  it('import and try-import: %workspace%, relative to the working directory, in place; a missing try-import is silent', async () => {
    const { ws, io, apply } = setup({
      'ws/.bazelrc': 'build --define=n=1\nimport %workspace%/tools/more.rc\ntry-import %workspace%/user.bazelrc\nbuild --define=n=3\n',
      'ws/tools/more.rc': 'build --define=n=2\ntry-import tools/relative.rc\n',
      'ws/tools/relative.rc': 'build --define=n=2b\n',
    });
    expect(io.cwd).toBe(ws);
    expect(await apply('build')).toEqual(['--define=n=1', '--define=n=2', '--define=n=2b', '--define=n=3']);
  });

  it.each([
    ['import %workspace%/missing.rc', "ws/.bazelrc:1: Unexpected error reading config file '<ws>/missing.rc': No such file or directory"],
    ['build --x\nimport a.rc b.rc', "ws/.bazelrc:2: Invalid import declaration in config file '<ws>/.bazelrc': 'import a.rc b.rc'"],
    ['build --define "open', 'ws/.bazelrc:1: unterminated quotation'],
  ])('%j is a usage error naming the file and line', async (rc, message) => {
    const { base, ws, apply } = setup({ 'ws/.bazelrc': `${rc}\n` });
    await expect(apply('build')).rejects.toThrow(message.replaceAll('<ws>', ws).replace(/^ws\//, `${base}/ws/`));
  });

  it('an import cycle is an error listing the chain', async () => {
    const { ws, apply } = setup({ 'ws/.bazelrc': 'import %workspace%/a.rc\n', 'ws/a.rc': 'build --jobs=1\nimport %workspace%/.bazelrc\n' });
    await expect(apply('build')).rejects.toThrow(`${ws}/a.rc:2: Import loop detected:\n  ${ws}/.bazelrc\n  ${ws}/a.rc\n  ${ws}/.bazelrc`);
  });

  it('an rc line for a command Bazel does not have is warned about and skipped, as Bazel does', async () => {
    const { ws, apply, stderr } = setup({ 'ws/.bazelrc': 'buidl --jobs=1\nbuild --jobs=2\n' });
    expect(await apply('build')).toEqual(['--jobs=2']);
    expect(stderr()).toBe(`WARNING: while reading option defaults file '${ws}/.bazelrc':\n  invalid command name 'buidl'.\n`);
  });
});

describe('--config', () => {
  it('expands in place, nested, from the rc files and the command line, with the inherited commands; not after --', async () => {
    const { apply } = setup({
      'ws/.bazelrc': 'build:a --define=x=1 --config=b --define=x=3\nbuild:b -c opt\ntest:a --test_output=all\nbuild --config=b\n',
    });
    expect(await apply('build', ['--jobs=2', '--config=a', '//t'])).toEqual(['-c', 'opt', '--jobs=2', '--define=x=1', '-c', 'opt', '--define=x=3', '//t']);
    expect(await apply('test', ['--config', 'a'])).toEqual(['-c', 'opt', '--define=x=1', '-c', 'opt', '--define=x=3', '--test_output=all']);
    expect(await apply('build', ['--', '--config=zzz'])).toEqual(['-c', 'opt', '--', '--config=zzz']);
  });

  it.each([
    ['build --config=nope', 'build', "Config value 'nope' is not defined in any .rc file"],
    // test:only is not a definition build can use.
    ['test:only --jobs=1\nbuild --config=only', 'build', "Config value 'only' is not defined in any .rc file"],
    [
      'build:a --config=b\nbuild:b --config=c\nbuild:c --config=a\nbuild --config=a',
      'build',
      'Config expansion has a cycle: config value a expands to itself, see inheritance chain [a, b, c]',
    ],
    [
      'build:a --config b\nbuild --config=a',
      'build',
      'the definition of config a expands to another config that either has no value or is not in the form --config=value',
    ],
  ])('%j is a usage error with Bazel wording', async (rc, command, message) => {
    const { apply } = setup({ 'ws/.bazelrc': `${rc}\n` });
    await expect(apply(command)).rejects.toThrow(message);
  });

  it('warns when a config is expanded twice', async () => {
    const { apply, stderr } = setup({ 'ws/.bazelrc': 'build:a --jobs=1\n' });
    expect(await apply('build', ['--config=a', '--config=a'])).toEqual(['--jobs=1', '--jobs=1']);
    expect(stderr()).toContain('WARNING: The following configs were expanded more than once: [a].');
  });

  it('--enable_platform_specific_config reads build:linux on Linux, build:macos on macOS, at the flag place; nothing when no such config', async () => {
    const files = { 'ws/.bazelrc': 'common --enable_platform_specific_config\nbuild:linux --define=os=linux\nbuild:macos --define=os=macos\nbuild --jobs=2\n' };
    const { apply } = setup(files);
    expect(await apply('build', [], { platform: 'linux' })).toEqual(['--define=os=linux', '--jobs=2']);
    expect(await apply('build', [], { platform: 'macos' })).toEqual(['--define=os=macos', '--jobs=2']);
    expect(await apply('build', ['--noenable_platform_specific_config'], { platform: 'linux' })).toEqual(['--jobs=2']);
    expect(await apply('build', [], { platform: 'windows' })).toEqual(['--jobs=2']);
  });
});

describe('common and always', () => {
  it("a common option the command does not support is skipped for it (query's --output for build, build's --jobs for query)", async () => {
    const { apply } = setup({ 'ws/.bazelrc': 'common --output=label_kind --jobs 3 --keep_going\ncommon:x --output=build\nbuild:x --define=a=b\n' });
    expect(await apply('build')).toEqual(['--jobs', '3', '--keep_going']);
    expect(await apply('query')).toEqual(['--output=label_kind', '--keep_going']);
    expect(await apply('build', ['--config=x'])).toEqual(['--jobs', '3', '--keep_going', '--define=a=b']);
  });

  it('an option no command knows is an error on common lines too; always lines and command lines must be supported by the command', async () => {
    const cases: [string, string, string][] = [
      ['common --no_such_flag', 'build', '.bazelrc:1: Unrecognized option: --no_such_flag'],
      ['common --no_such_flag', 'query', '.bazelrc:1: Unrecognized option: --no_such_flag'],
      ['build --jobs=1\nalways --output=label', 'build', '.bazelrc:2: Unrecognized option: --output=label'],
      ['build --bogus', 'test', '.bazelrc:1: Unrecognized option: --bogus'],
    ];
    for (const [rc, command, message] of cases) {
      const { ws, apply } = setup({ 'ws/.bazelrc': `${rc}\n` });
      await expect(apply(command), rc).rejects.toThrow(`${ws}/${message}`);
    }
  });

  it('takes the supportsOption predicate as a parameter', async () => {
    const { apply } = setup({ 'ws/.bazelrc': 'common --a --b\nalways --c\n' });
    const supportsOption = (command: string, word: string) => (command === 'build' ? word !== '--b' : word === '--b');
    expect(await apply('build', [], { supportsOption })).toEqual(['--c', '--a']);
  });
});

describe('--announce_rc', () => {
  it("prints Bazel's INFO lines: each file's options per command, ignored common options, config definitions, startup options", async () => {
    const { ws, base, apply, stderr } = setup({
      'ws/.bazelrc':
        'startup --max_idle_secs=5 --batch\ncommon --output=label --keep_going\nbuild --jobs=2\nbuild:ci --define=ci=1\nimport %workspace%/more.rc\n',
      'ws/more.rc': 'build --define=more=1\n',
      'home/.bazelrc': 'common --announce_rc\n',
    });
    expect(await apply('build', ['--config=ci', '--host_jvm_debug'])).toEqual(['--keep_going', '--jobs=2', '--define=more=1', '--define=ci=1']);
    expect(stderr()).toBe(
      [
        `INFO: Reading 'startup' options from ${ws}/.bazelrc: --max_idle_secs=5, --batch`,
        'INFO: Startup option --max_idle_secs=5 has no effect: Kiln runs no server (each command is its own process)',
        'INFO: Startup option --batch has no effect: Kiln runs no server (each command is its own process)',
        'INFO: Startup option --host_jvm_debug has no effect: Kiln runs no server (each command is its own process)',
        `INFO: Reading rc options for 'build' from ${ws}/.bazelrc:\n  Inherited 'common' options: --output=label --keep_going\n  Ignored as unsupported by 'build': --output=label`,
        `INFO: Reading rc options for 'build' from ${base}/home/.bazelrc:\n  Inherited 'common' options: --announce_rc`,
        `INFO: Reading rc options for 'build' from ${ws}/.bazelrc:\n  'build' options: --jobs=2`,
        `INFO: Reading rc options for 'build' from ${ws}/more.rc:\n  'build' options: --define=more=1`,
        `INFO: Found applicable config definition build:ci in file ${ws}/.bazelrc: --define=ci=1`,
        '',
      ].join('\n'),
    );
  });

  it("notes the common options a config's expansion skips, after the definitions, as ConfigExpander does", async () => {
    const { ws, apply, stderr } = setup({ 'ws/.bazelrc': 'common:x --output=build --keep_going\nbuild:x --jobs=1\n' });
    expect(await apply('build', ['--announce_rc', '--config=x'])).toEqual(['--keep_going', '--jobs=1']);
    expect(stderr()).toBe(
      [
        `INFO: Found applicable config definition common:x in file ${ws}/.bazelrc: --output=build --keep_going`,
        `INFO: Found applicable config definition build:x in file ${ws}/.bazelrc: --jobs=1`,
        "INFO: Ignored as unsupported by 'build': --output=build",
        '',
      ].join('\n'),
    );
  });

  it('prints nothing without --announce_rc (or with --noannounce_rc last)', async () => {
    const { apply, stderr } = setup({ 'ws/.bazelrc': 'build --announce_rc --jobs=2\n' });
    expect(await apply('build', ['--noannounce_rc'])).toEqual(['--jobs=2']);
    expect(stderr()).toBe('');
  });
});

describe('startup lines', () => {
  it.each([
    ['startup --no_such_startup', "ws/.bazelrc:1: Unknown startup option: '--no_such_startup'."],
    ['startup --bazelrc=/x', "ws/.bazelrc:1: Can't specify --bazelrc in the .bazelrc file."],
    ['\nstartup --nohome_rc', "ws/.bazelrc:2: Can't specify --nohome_rc in .bazelrc file."],
    ['startup --io_nice_level=9', "ws/.bazelrc:1: Invalid argument to --io_nice_level: '9'. Must not exceed 7."],
  ])('%j is an error naming the file and line', async (rc, message) => {
    const { base, apply } = setup({ 'ws/.bazelrc': `${rc}\n` });
    await expect(apply('build')).rejects.toThrow(`${base}/${message}`);
  });
});
