import { describe, expect, it } from 'vitest';
import type { KilnError } from '../../../src/core/index.js';
import { configurationMakeVariables } from '../../../src/analysis/expansion/configuration-make-variables.js';
import { GenruleCommandError, prepareGenruleCommand, type GenruleCommandInput } from '../../../src/analysis/expansion/genrule-command.js';
import { expandLocations, ExpansionFailure, type LocationEntry } from '../../../src/analysis/expansion/location-expander.js';
import { expandMakeVariables } from '../../../src/analysis/expansion/make-variable-expander.js';
import { configs } from '../config/config-fixture.js';

// Modelled on a Bazel 2.1.0 run (package a: sources s1 s2, filegroup grp = [s1, s2], tool.sh from a genrule
// built in the exec configuration). Bazel printed `$(location :tool)` as bazel-out/host/bin/a/tool.sh and
// `$(rootpath :tool)` as a/tool.sh; Kiln's exec directory is bazel-out/k8-opt-exec.
const BIN = 'bazel-out/k8-fastbuild/bin';
const EXEC_BIN = 'bazel-out/k8-opt-exec/bin';
const PREREQUISITES = new Map<string, LocationEntry>([
  ['//a:s1', { execPaths: ['a/s1'], rootPaths: ['a/s1'] }],
  ['//a:s2', { execPaths: ['a/s2'], rootPaths: ['a/s2'] }],
  ['//a:grp', { execPaths: ['a/s1', 'a/s2'], rootPaths: ['a/s1', 'a/s2'] }],
  ['//a:tool', { execPaths: [`${EXEC_BIN}/a/tool.sh`], rootPaths: ['a/tool.sh'] }],
  ['//a:empty', { execPaths: [], rootPaths: [] }],
  ['//a:out.txt', { execPaths: [`${BIN}/a/out.txt`], rootPaths: ['a/out.txt'] }],
  ['@ext//lib:x', { execPaths: ['external/ext/lib/x'], rootPaths: ['../ext/lib/x'] }],
]);

/** Relative labels resolve in package a, like the loader's label parser. */
function canonicalize(raw: string): string | undefined {
  if (raw.startsWith('@')) return raw;
  if (raw.startsWith('//')) return raw.includes(':') ? raw : `${raw}:${raw.slice(raw.lastIndexOf('/') + 1)}`;
  const name = raw.startsWith(':') ? raw.slice(1) : raw;
  return name === '' || name.includes(' ') ? undefined : `//a:${name}`;
}

function input(cmd: string, more: Partial<GenruleCommandInput> = {}): GenruleCommandInput {
  return {
    ruleLabel: '//a:g',
    pos: { file: '/ws/a/BUILD', line: 14, col: 1 },
    commands: { cmd },
    srcs: ['a/s1'],
    outs: [`${BIN}/a/out.txt`],
    ruleDir: `${BIN}/a`,
    locations: { prerequisites: PREREQUISITES, canonicalize },
    configVariables: configurationMakeVariables(configs([]).target),
    ...more,
  };
}

const expand = (cmd: string, more: Partial<GenruleCommandInput> = {}) => prepareGenruleCommand(input(cmd, more)).expanded;

function errorOf(cmd: string, more: Partial<GenruleCommandInput> = {}): KilnError {
  try {
    prepareGenruleCommand(input(cmd, more));
  } catch (e) {
    expect(e).toBeInstanceOf(GenruleCommandError);
    return e as KilnError;
  }
  throw new Error(`no error for ${cmd}`);
}

describe('location substitution', () => {
  it.each([
    ['$(location :s1)', 'a/s1'],
    ['$(location //a:s1)', 'a/s1'],
    ['$(location s1)', 'a/s1'],
    ['$(locations :grp)', 'a/s1 a/s2'],
    ['$(execpath :tool)', `${EXEC_BIN}/a/tool.sh`],
    ['$(location :tool)', `${EXEC_BIN}/a/tool.sh`],
    ['$(execpaths :grp)', 'a/s1 a/s2'],
    ['$(rootpath :tool)', 'a/tool.sh'],
    ['$(rootpaths :grp)', 'a/s1 a/s2'],
    ['$(location out.txt)', `${BIN}/a/out.txt`],
    ['$(rootpath @ext//lib:x)', '../ext/lib/x'],
    ['$(location  :s1 )', 'a/s1'],
    ['cat $(location :s1) $(location :s2) > $@', `cat a/s1 a/s2 > ${BIN}/a/out.txt`],
  ])('%s → %s', (cmd, expected) => {
    expect(expand(cmd)).toBe(expected);
  });

  // Messages observed from Bazel 2.1.0 (genrules //a:loc, //a:locs and //a:multi).
  it('a label that is not a prerequisite is an error naming it', () => {
    const e = errorOf('echo $(location :nope) > $@');
    expect(e.format()).toBe(
      "/ws/a/BUILD:14:1: in cmd attribute of genrule rule //a:g: label '//a:nope' in $(location) expression is not a declared prerequisite of this rule",
    );
    expect(errorOf('$(rootpaths //b:x)').message).toContain("label '//b:x' in $(rootpaths) expression is not a declared prerequisite of this rule");
  });

  it('a singular form with several files is an error naming the label and the files', () => {
    expect(errorOf('$(location :grp)').message).toBe(
      "in cmd attribute of genrule rule //a:g: label '//a:grp' in $(location) expression expands to more than one file, " +
        'please use $(locations //a:grp) instead.  Files (at most 5 shown) are: [a/s1, a/s2]',
    );
    expect(errorOf('$(execpath :grp)').message).toContain('please use $(execpaths //a:grp) instead');
    expect(errorOf('$(rootpath :grp)').message).toContain('please use $(rootpaths //a:grp) instead');
  });

  it('a label with no files is an error', () => {
    expect(errorOf('$(locations :empty)').message).toContain("label '//a:empty' in $(locations) expression expands to no files");
  });

  it('an unterminated location is an error', () => {
    expect(errorOf('echo $(location :s1').message).toContain('unterminated $(location) expression');
  });

  it('$$(location x) stays literal and substituted paths are not expanded again', () => {
    expect(expand('echo $$(location :s1)')).toBe('echo $(location :s1)');
    const weird = new Map([['//a:d', { execPaths: ['a/$(OUTS)$<'], rootPaths: ['a/$x'] }]]);
    expect(expand('cp $(location :d) x', { locations: { prerequisites: weird, canonicalize } })).toBe("cp 'a/$(OUTS)$<' x");
  });

  // Bazel 2.1.0 (test/e2e/differential, //pkg:quote and //pkg:locs): a sorted set, each path shell-quoted.
  it('plural forms expand to the sorted, de-duplicated set of paths', () => {
    const unsorted = new Map([['//a:fg', { execPaths: ['a/z', 'a/b', 'a/z', 'a/B', 'a/a'], rootPaths: ['a/z', 'a/z'] }]]);
    const locations = { prerequisites: unsorted, canonicalize };
    expect(expand('$(locations :fg)', { locations })).toBe('a/B a/a a/b a/z');
    expect(expand('$(execpaths :fg)', { locations })).toBe('a/B a/a a/b a/z');
    expect(expand('$(rootpaths :fg)', { locations })).toBe('a/z');
    expect(expand('$(rootpath :fg)', { locations })).toBe('a/z');
  });

  it("each path is quoted as Bazel's ShellEscaper quotes it", () => {
    const odd = new Map([['//a:q', { execPaths: ["a/e'q", 'a/d$x', 'a/c d', 'a/ok-_+=:,.@%'], rootPaths: [] }]]);
    const locations = { prerequisites: odd, canonicalize };
    // `$` is doubled for the Make phase, which turns it back into one `$`.
    expect(expandLocations('$(locations :q)', locations)).toBe("'a/c d' 'a/d$$x' 'a/e'\\''q' a/ok-_+=:,.@%");
    expect(expand('$(locations :q)', { locations })).toBe("'a/c d' 'a/d$x' 'a/e'\\''q' a/ok-_+=:,.@%");
  });

  it('substitution comes before Make variables: a location error wins over an undefined variable after it', () => {
    expect(errorOf('$(FOO) $(location :nope)').message).toContain('not a declared prerequisite');
  });

  it('expandLocations leaves Make variables alone', () => {
    expect(expandLocations('$(SRCS) $< $$ $(location :s1) $(FOO', { prerequisites: PREREQUISITES, canonicalize })).toBe('$(SRCS) $< $$ a/s1 $(FOO');
  });
});

describe('Make variables', () => {
  it('$(SRCS), $<, $(OUTS), $@, $$', () => {
    expect(expand('cat $(SRCS) > $(OUTS)', { srcs: ['a/s1', 'a/s2'] })).toBe(`cat a/s1 a/s2 > ${BIN}/a/out.txt`);
    expect(expand('cat $< > $@')).toBe(`cat a/s1 > ${BIN}/a/out.txt`);
    expect(expand('echo $$HOME $$$$ "$$(date)"')).toBe('echo $HOME $$ "$(date)"');
  });

  // Messages observed from Bazel 2.1.0 (genrules //a:lt and //a:at).
  it('$< needs exactly one src, $@ exactly one out', () => {
    expect(errorOf('cat $< > $@', { srcs: ['a/s1', 'a/s2'] }).message).toBe("in cmd attribute of genrule rule //a:g: variable '$<' : more than one input file");
    expect(errorOf('cat $<', { srcs: [] }).message).toContain("variable '$<' : no input file");
    expect(errorOf('touch $@', { outs: ['o1', 'o2'] }).message).toBe("in cmd attribute of genrule rule //a:g: variable '$@' : more than one output file");
  });

  // Observed from Bazel 2.1.0: outs = ["d/x1"] gives $(@D) = <bin>/a/d; outs = ["d/y1", "d/y2"] gives <bin>/a.
  it('$(@D): the directory of a single out, else the package directory; $(RULEDIR) always the package directory', () => {
    expect(expand('$(@D) $(RULEDIR)', { outs: [`${BIN}/a/d/x1`] })).toBe(`${BIN}/a/d ${BIN}/a`);
    expect(expand('$(@D) $(RULEDIR)', { outs: [`${BIN}/a/d/y1`, `${BIN}/a/d/y2`] })).toBe(`${BIN}/a ${BIN}/a`);
  });

  it('configuration variables (observed: bazel-out/k8-fastbuild/bin k8 fastbuild)', () => {
    expect(expand('$(BINDIR) $(GENDIR) $(TARGET_CPU) $(COMPILATION_MODE)')).toBe(`${BIN} ${BIN} k8 fastbuild`);
    const exec = configurationMakeVariables(configs([]).exec);
    expect(expand('$(BINDIR) $(TARGET_CPU) $(COMPILATION_MODE)', { configVariables: exec })).toBe(`${EXEC_BIN} k8 opt`);
  });

  // Observed from Bazel 2.1.0: --define=FOO=1 --define=FOO=2 --define=TARGET_CPU=zz with `echo $(FOO) $(TARGET_CPU)` wrote "2 zz".
  it('--define NAME=VALUE is a Make variable: the later value wins and it overrides a predefined one', () => {
    const vars = configurationMakeVariables(configs(['--define=FOO=1', '--define=FOO=2', '--define=TARGET_CPU=zz']).target);
    expect(expand('echo $(FOO) $(TARGET_CPU)', { configVariables: vars })).toBe('echo 2 zz');
  });

  it('variables of toolchains (TemplateVariableInfo) win over the configuration', () => {
    const toolchainVariables = new Map([
      ['CC', '/usr/bin/gcc'],
      ['TARGET_CPU', 'custom'],
    ]);
    expect(expand('$(CC) $(TARGET_CPU)', { toolchainVariables })).toBe('/usr/bin/gcc custom');
  });

  it('$(JAVA), $(JAVABASE), $(JAVAC) come from the exec configuration’s Java runtime', () => {
    const javaRuntime = { javaHome: 'external/jdk', java: 'external/jdk/bin/java', javac: 'external/jdk/bin/javac' };
    expect(expand('$(JAVA) $(JAVABASE) $(JAVAC)', { javaRuntime })).toBe('external/jdk/bin/java external/jdk external/jdk/bin/javac');
    expect(errorOf('$(JAVA) -version').message).toBe(
      'in cmd attribute of genrule rule //a:g: $(JAVA) not defined: no Java runtime is configured for the exec configuration ' +
        '(set --host_javabase or list a Java runtime in toolchains)',
    );
    expect(errorOf('$(JAVAC)', { javaRuntime: { javaHome: 'jre', java: 'jre/bin/java' } }).message).toContain('has no javac');
  });

  // Observed from Bazel 2.1.0 (genrule //a:undef): `$(FOO) not defined`.
  it('unknown variables, $X shorthand and malformed references', () => {
    expect(errorOf('echo $(FOO)').message).toBe('in cmd attribute of genrule rule //a:g: $(FOO) not defined');
    expect(errorOf('echo $HOME').message).toContain('$(H) not defined');
    // A function call names only the function, as Bazel 4.2.3 printed `$(touch) not defined` for `$(touch X)`.
    expect(errorOf('echo $(foo bar)').message).toContain('$(foo) not defined');
    expect(errorOf('echo $(SRCS').message).toContain('unterminated variable reference');
    expect(errorOf('echo $').message).toContain('unterminated $');
  });

  it('expandMakeVariables reports failures of its lookup unchanged', () => {
    expect(() =>
      expandMakeVariables('$(X)', () => {
        throw new ExpansionFailure('boom');
      }),
    ).toThrow('boom');
  });
});

describe('Bash command', () => {
  it('runs bash -c with set -euo pipefail', () => {
    expect(prepareGenruleCommand(input('cat $< > $@')).argv).toEqual(['/bin/bash', '-c', `set -euo pipefail; cat a/s1 > ${BIN}/a/out.txt`]);
  });

  it('cmd_bash wins over cmd on Linux', () => {
    const c = prepareGenruleCommand(input('echo cmd', { commands: { cmd: 'echo cmd', cmd_bash: 'echo bash', cmd_bat: 'echo bat' } }));
    expect(c.attribute).toBe('cmd_bash');
    expect(c.expanded).toBe('echo bash');
  });

  it('cmd_bat and cmd_ps do not apply on Linux; cmd is used', () => {
    const c = prepareGenruleCommand(input('x', { commands: { cmd: 'echo cmd', cmd_bat: 'echo bat', cmd_ps: 'echo ps' } }));
    expect(c.attribute).toBe('cmd');
  });

  it('on Windows cmd_ps beats cmd_bat beats cmd_bash beats cmd (selection only)', () => {
    const all = { cmd: 'a', cmd_bash: 'b', cmd_bat: 'c', cmd_ps: 'd' };
    expect(errorOf('x', { hostOs: 'win32', commands: all }).message).toContain('cmd_ps is not supported');
    expect(errorOf('x', { hostOs: 'win32', commands: { ...all, cmd_ps: '' } }).message).toContain('cmd_bat is not supported');
    expect(prepareGenruleCommand(input('x', { hostOs: 'win32', commands: { cmd: 'a', cmd_bash: 'b' } })).attribute).toBe('cmd_bash');
  });

  // Observed from Bazel 2.1.0 on Linux (genrule //a:bat with only cmd_bat).
  it('only cmd_bat / cmd_ps is an error on Linux', () => {
    expect(errorOf('', { commands: { cmd_bat: 'echo hi' } }).message).toBe(
      'in cmd attribute of genrule rule //a:g: missing value for `cmd` attribute, you can also set `cmd_ps` or `cmd_bat` on Windows and `cmd_bash` on other platforms.',
    );
    expect(() => prepareGenruleCommand(input('', { commands: { cmd_ps: 'x' } }))).toThrow(GenruleCommandError);
  });

  it('a command of any length stays one bash -c argument (execution alone writes long ones to a script)', () => {
    const long = `echo ${'x'.repeat(100 * 1024)}`;
    const c = prepareGenruleCommand(input(long));
    expect(c.argv).toEqual(['/bin/bash', '-c', `set -euo pipefail; ${long}`]);
    expect(Object.keys(c)).not.toContain('script');
  });
});

describe('file names the shell would read as more than a name', () => {
  const errorOf = (cmd: string, more: Partial<GenruleCommandInput>) => {
    try {
      prepareGenruleCommand(input(cmd, more));
    } catch (e) {
      return (e as Error).message;
    }
    throw new Error('no error');
  };

  it('a $(...) in a name is expanded as Bazel expands it: $(touch) not defined, never a command', () => {
    expect(errorOf('cat $(SRCS) > $@', { srcs: ['a/dollar$(touch X).txt'] })).toBe('in cmd attribute of genrule rule //a:g: $(touch) not defined');
    expect(expandMakeVariables('$(a)', (n) => ({ a: '$(b)', b: 'B' })[n])).toBe('B');
    expect(() => expandMakeVariables('$(a)', (n) => ({ a: '$(a)' })[n])).toThrow("potentially unbounded recursion during expansion of '$(a)'");
  });

  it('$(SRCS), $<, $(OUTS) and $@ refuse a name with blanks, quotes, $ or command characters, which Bazel would put in unquoted', () => {
    for (const [variable, more, path] of [
      ['$(SRCS)', { srcs: ['a/x;touch X;.txt'] }, 'a/x;touch X;.txt'],
      ['$<', { srcs: ['a/x;touch X;.txt'] }, 'a/x;touch X;.txt'],
      ['$(OUTS)', { outs: [`${BIN}/a/x;touch X;.txt`] }, `${BIN}/a/x;touch X;.txt`],
      ['$@', { outs: [`${BIN}/a/x;touch X;.txt`] }, `${BIN}/a/x;touch X;.txt`],
    ] as const) {
      expect(errorOf(`echo ${variable}`, more)).toBe(
        `in cmd attribute of genrule rule //a:g: ${variable} would put '${path}' into the command unquoted, and the shell interprets its ';': rename the file, or use $(execpaths ...) or $(locations ...), which quote each path`,
      );
    }
    expect(errorOf('cat $<', { srcs: ['a/two$$dollars'] })).toContain("would put 'a/two$dollars' into the command unquoted, and the shell interprets its '$'");
    expect(errorOf('cat $<', { srcs: ['a/with space'] })).toContain('the shell interprets its a blank');
    // Names the shell reads as themselves pass; the location functions quote each path, as Bazel.
    expect(expand('cat $(SRCS)', { srcs: ['a/ok-name_1+2=3@x,y.txt'] })).toBe('cat a/ok-name_1+2=3@x,y.txt');
  });
});
