import { describe, expect, it } from 'vitest';
import type { KilnError } from '../../../src/core/index.js';
import { Label, Selector, SelectorList } from '../../../src/loading/index.js';
import { Analyzer } from '../../../src/analysis/configured/analyzer.js';
import type { AnalysisTarget, TargetGraph } from '../../../src/analysis/configured/configured-target.js';
import { configs } from '../config/config-fixture.js';

const at = (label: string) => ({ file: `/ws/${label.slice(2, label.indexOf(':'))}/BUILD`, line: 1, col: 1 });
const rule = (label: string, ruleClass: string, attrs: Record<string, unknown>, outputs: string[] = []): AnalysisTarget => ({
  kind: 'rule',
  label,
  ruleClass,
  location: at(label),
  attrs: new Map(Object.entries(attrs)),
  outputs,
});
const source = (label: string): AnalysisTarget => ({ kind: 'source', label, location: at(label) });
const generated = (label: string, generatingRule: string): AnalysisTarget => ({ kind: 'generated', label, location: at(label), generatingRule });
const sel = (conditions: [string, unknown][], noMatchError = '') => new SelectorList([new Selector(conditions, noMatchError)]);

/** A workspace like the one Bazel 2.1.0 built for these notes (package a), plus visibility fixtures. */
function graph(extra: AnalysisTarget[] = [], defaults: Record<string, string[]> = {}): TargetGraph {
  const targets: AnalysisTarget[] = [
    source('//a:s1'),
    source('//a:s2'),
    source('//a:tool.sh.in'),
    rule('//a:opt', 'config_setting', { values: [['compilation_mode', 'opt']] }),
    rule('//a:grp', 'filegroup', { srcs: ['//a:s1', '//a:s2', '//a:s1'], visibility: ['//visibility:public'] }),
    rule('//a:grp_data', 'filegroup', { srcs: ['//a:s1'], data: ['//a:grp2'] }),
    rule('//a:grp2', 'filegroup', { srcs: ['//a:s2'], data: ['//a:tool.sh.in'] }),
    rule('//a:tool', 'genrule', { srcs: ['//a:tool.sh.in'], cmd: 'cp $< $@', executable: true }, ['tool.sh']),
    generated('//a:tool.sh', '//a:tool'),
    rule('//a:gen', 'genrule', { srcs: ['//a:grp'], tools: ['//a:tool'], cmd: '$(location :tool) $(SRCS) > $@', tags: ['no-remote'] }, ['gen.out']),
    generated('//a:gen.out', '//a:gen'),
    rule('//a:use_out', 'filegroup', { srcs: ['//a:gen.out'] }),
    rule(
      '//a:sel',
      'genrule',
      {
        cmd: new SelectorList([
          'echo ',
          new Selector(
            [
              ['//a:opt', 'O'],
              ['//conditions:default', 'D'],
            ],
            '',
          ),
          ' > $@',
        ]),
      },
      ['sel.out'],
    ),
    rule('//a:al', 'alias', { actual: '//a:grp', visibility: ['//visibility:public'] }),
    rule('//a:al_sel', 'alias', {
      actual: sel([
        ['//a:opt', '//a:s1'],
        ['//conditions:default', '//a:s2'],
      ]),
    }),
    rule('//a:suite', 'test_suite', {}),
    rule('//a:al_suite', 'alias', { actual: '//a:suite' }),
    { kind: 'package_group', label: '//a:friends', location: at('//a:friends'), packages: ['//b/...', '-//b/secret'], includes: [] },
    rule('//a:al_pg', 'alias', { actual: '//a:friends' }),
    rule('//a:private_fg', 'filegroup', { srcs: ['//a:s1'] }),
    rule('//a:friends_fg', 'filegroup', { srcs: ['//a:s1'], visibility: ['//a:friends'] }),
    rule('//a:sub_fg', 'filegroup', { srcs: ['//a:s1'], visibility: ['//b:__subpackages__'] }),
    rule('//a:testdata', 'filegroup', { srcs: ['//a:s1'], testonly: true, visibility: ['//visibility:public'] }),
    rule('//a:al_testdata', 'alias', { actual: '//a:testdata', visibility: ['//visibility:public'] }),
    rule('//a:bad_opt', 'config_setting', {}),
    rule('//a:uses_bad', 'genrule', { cmd: sel([['//a:bad_opt', 'x']]) }, ['ub.out']),
    ...extra,
  ];
  const byLabel = new Map(targets.map((t) => [t.label, t]));
  return { target: (l) => byLabel.get(l), defaultVisibility: (label) => defaults[Label.parse(label).packageKey] };
}

function analyzer(args: string[] = [], extra: AnalysisTarget[] = [], defaults: Record<string, string[]> = {}): Analyzer {
  return new Analyzer(graph(extra, defaults), { configurations: configs(args) });
}

const paths = (files: readonly { artifact: { execPath: string } }[]) => files.map((f) => f.artifact.execPath);

describe('filegroup', () => {
  it('files of all srcs in order without duplicates', () => {
    expect(paths(analyzer().analyzeTopLevel('//a:grp').files)).toEqual(['a/s1', 'a/s2']);
  });

  it('data joins runfiles and propagates through data', () => {
    const fg = analyzer().analyzeTopLevel('//a:grp_data');
    expect(paths(fg.files)).toEqual(['a/s1']);
    expect(paths(fg.runfiles)).toEqual(['a/s1', 'a/s2', 'a/tool.sh.in']);
  });

  it('output_group takes that group of the srcs', () => {
    const withGroup = rule('//a:og', 'filegroup', { srcs: ['//a:grp'], output_group: 'missing' });
    expect(paths(analyzer([], [withGroup]).analyzeTopLevel('//a:og').files)).toEqual([]);
  });

  it('a consumer may name one output file of a genrule', () => {
    expect(paths(analyzer().analyzeTopLevel('//a:use_out').files)).toEqual(['bazel-out/k8-fastbuild/bin/a/gen.out']);
  });
});

describe('genrule', () => {
  it('srcs in the target configuration, tools (and the genrule behind them) in the exec configuration', () => {
    const a = analyzer();
    const gen = a.analyzeTopLevel('//a:gen');
    const [action] = gen.actions;
    expect(action!.argv).toEqual([
      '/bin/bash',
      '-c',
      'set -euo pipefail; bazel-out/k8-opt-exec/bin/a/tool.sh a/s1 a/s2 > bazel-out/k8-fastbuild/bin/a/gen.out',
    ]);
    expect(action!.mnemonic).toBe('Genrule');
    expect(action!.progressMessage).toBe('Executing genrule //a:gen');
    expect(action!.executionRequirements).toEqual(['no-remote']);
    expect(action!.inputs.map((x) => x.execPath)).toEqual(['a/s1', 'a/s2', 'bazel-out/k8-opt-exec/bin/a/tool.sh']);
    expect(action!.outputs.map((x) => x.execPath)).toEqual(['bazel-out/k8-fastbuild/bin/a/gen.out']);
    // The tool genrule was analysed in the exec configuration: its own srcs and outs follow.
    const toolAction = a.actions().find((x) => x.owner === '//a:tool')!;
    expect(toolAction.argv[2]).toBe('set -euo pipefail; cp a/tool.sh.in bazel-out/k8-opt-exec/bin/a/tool.sh');
    expect(toolAction.executableOutputs).toBe(true);
  });

  it('the same genrule top-level stays in the target configuration', () => {
    expect(paths(analyzer().analyzeTopLevel('//a:tool').files)).toEqual(['bazel-out/k8-fastbuild/bin/a/tool.sh']);
  });

  it('select() in cmd resolves per configuration (string concatenation)', () => {
    expect(analyzer().analyzeTopLevel('//a:sel').actions[0]!.argv[2]).toBe('set -euo pipefail; echo D > bazel-out/k8-fastbuild/bin/a/sel.out');
    expect(analyzer(['-c', 'opt']).analyzeTopLevel('//a:sel').actions[0]!.argv[2]).toBe('set -euo pipefail; echo O > bazel-out/k8-opt/bin/a/sel.out');
  });

  it('output_to_bindir chooses bin over genfiles when genfiles is separate', () => {
    const g = rule('//a:g2', 'genrule', { cmd: 'touch $@', output_to_bindir: true }, ['g2.out']);
    const h = rule('//a:g3', 'genrule', { cmd: 'touch $@' }, ['g3.out']);
    const a = analyzer(['--noincompatible_merge_genfiles_directory'], [g, h]);
    expect(paths(a.analyzeTopLevel('//a:g2').files)).toEqual(['bazel-out/k8-fastbuild/bin/a/g2.out']);
    expect(paths(a.analyzeTopLevel('//a:g3').files)).toEqual(['bazel-out/k8-fastbuild/genfiles/a/g3.out']);
  });

  it('local = True and message', () => {
    const g = rule('//a:loc', 'genrule', { cmd: 'touch $@', local: true, message: 'Making' }, ['l.out']);
    const [action] = analyzer([], [g]).analyzeTopLevel('//a:loc').actions;
    expect(action!.executionRequirements).toEqual(['local']);
    expect(action!.progressMessage).toBe('Making //a:loc');
  });

  it('toolchains provide Make variables only through TemplateVariableInfo', () => {
    const g = rule('//a:tc', 'genrule', { cmd: 'touch $@', toolchains: ['//a:grp'] }, ['tc.out']);
    expect(() => analyzer([], [g]).analyzeTopLevel('//a:tc')).toThrow(
      "in toolchains attribute of genrule rule //a:tc: '//a:grp' does not have mandatory providers: 'TemplateVariableInfo'",
    );
  });

  it('executable genrules need exactly one output', () => {
    const g = rule('//a:ex', 'genrule', { cmd: 'touch $(OUTS)', executable: true }, ['x', 'y']);
    expect(() => analyzer([], [g]).analyzeTopLevel('//a:ex')).toThrow('in executable attribute of genrule rule //a:ex');
  });

  it('a select on outs (nonconfigurable) is an error', () => {
    const g = rule('//a:nc', 'genrule', { cmd: 'x', executable: sel([['//conditions:default', true]]) }, ['nc']);
    expect(() => analyzer([], [g]).analyzeTopLevel('//a:nc')).toThrow('//a:nc: attribute "executable" is not configurable');
  });
});

describe('config_setting', () => {
  it('provides its match in the configuration of the target that uses it', () => {
    const a = analyzer(['-c', 'opt']);
    expect(a.analyzeTopLevel('//a:opt').configMatch!.matches).toBe(true);
    expect(analyzer().analyzeTopLevel('//a:opt').configMatch!.matches).toBe(false);
  });

  it('an invalid config_setting fails the select that uses it, with its position', () => {
    let error: unknown;
    try {
      analyzer().analyzeTopLevel('//a:uses_bad');
    } catch (e) {
      error = e;
    }
    expect((error as KilnError).format()).toBe(
      '/ws/a/BUILD:1:1: in config_setting rule //a:bad_opt: Either values, flag_values or constraint_values must be specified and non-empty',
    );
  });

  it('a select condition that is not a config_setting is an error', () => {
    const g = rule('//a:badcond', 'genrule', { cmd: sel([['//a:grp', 'x']]) }, ['bc']);
    expect(() => analyzer([], [g]).analyzeTopLevel('//a:badcond')).toThrow('//a:grp is not a valid select() condition for //a:badcond.');
  });
});

describe('alias', () => {
  it('forwards the providers of actual under its own label', () => {
    const al = analyzer().analyzeTopLevel('//a:al');
    expect(al.label).toBe('//a:al');
    expect(paths(al.files)).toEqual(['a/s1', 'a/s2']);
    expect(al.kindName).toBe('filegroup');
  });

  it('may hold a select', () => {
    expect(paths(analyzer(['-c', 'opt']).analyzeTopLevel('//a:al_sel').files)).toEqual(['a/s1']);
    expect(paths(analyzer().analyzeTopLevel('//a:al_sel').files)).toEqual(['a/s2']);
  });

  it('cannot alias a test_suite or a package_group', () => {
    expect(() => analyzer().analyzeTopLevel('//a:al_suite')).toThrow(
      "in actual attribute of alias rule //a:al_suite: test_suite rule '//a:suite' cannot be aliased",
    );
    expect(() => analyzer().analyzeTopLevel('//a:al_pg')).toThrow('in actual attribute of alias rule //a:al_pg: package group');
  });

  it("keeps its own visibility and takes the actual's testonly", () => {
    const viaAlias = rule('//b:uses_alias', 'filegroup', { srcs: ['//a:al_testdata'] });
    expect(() => analyzer([], [viaAlias]).analyzeTopLevel('//b:uses_alias')).toThrow(
      "non-test target '//b:uses_alias' depends on testonly target '//a:al_testdata'",
    );
    // The alias itself is not testonly, yet may point at a testonly target.
    expect(analyzer().analyzeTopLevel('//a:al_testdata').testonly).toBe(true);
    const privateAlias = rule('//a:al_private', 'alias', { actual: '//a:grp' });
    const user = rule('//b:uses_private_alias', 'filegroup', { srcs: ['//a:al_private'] });
    expect(() => analyzer([], [privateAlias, user]).analyzeTopLevel('//b:uses_private_alias')).toThrow("target '//a:al_private' is not visible");
  });
});

describe('visibility and testonly', () => {
  const user = (label: string, dep: string, attrs: Record<string, unknown> = {}) => rule(label, 'filegroup', { srcs: [dep], ...attrs });

  it.each([
    ['public', '//b:u', '//a:grp', true],
    ['private by default', '//b:u', '//a:private_fg', false],
    ['same package always', '//a:u', '//a:private_fg', true],
    ['package group includes //b/...', '//b/c:u', '//a:friends_fg', true],
    ['package group excludes -//b/secret', '//b/secret:u', '//a:friends_fg', false],
    ['package group does not name //c', '//c:u', '//a:friends_fg', false],
    ['__subpackages__ includes the package', '//b:u', '//a:sub_fg', true],
    ['__subpackages__ includes below', '//b/x/y:u', '//a:sub_fg', true],
    ['__subpackages__ excludes siblings', '//bb:u', '//a:sub_fg', false],
    ['source files are public', '//b:u', '//a:s1', true],
  ])('%s', (_name, from, dep, visible) => {
    const run = () => analyzer([], [user(from, dep)]).analyzeTopLevel(from);
    if (visible) expect(run).not.toThrow();
    else
      expect(run).toThrow(
        `in srcs attribute of filegroup rule ${from}: target '${dep}' is not visible from target '${from}'. Check the visibility declaration of the former target if you think the dependency is legitimate`,
      );
  });

  it('package default_visibility applies when the target has none; --nocheck_visibility turns the check off', () => {
    expect(() => analyzer([], [user('//b:u', '//a:private_fg')], { '//a': ['//visibility:public'] }).analyzeTopLevel('//b:u')).not.toThrow();
    expect(() => analyzer(['--nocheck_visibility'], [user('//b:u', '//a:private_fg')]).analyzeTopLevel('//b:u')).not.toThrow();
  });

  it('a non-testonly target cannot depend on a testonly one', () => {
    expect(() => analyzer([], [user('//b:u', '//a:testdata')]).analyzeTopLevel('//b:u')).toThrow(
      "in srcs attribute of filegroup rule //b:u: non-test target '//b:u' depends on testonly target '//a:testdata' and doesn't have testonly attribute set",
    );
    expect(() => analyzer([], [user('//b:u', '//a:testdata', { testonly: true })]).analyzeTopLevel('//b:u')).not.toThrow();
  });

  it('a package_group in srcs is misplaced; a missing target is named', () => {
    expect(() => analyzer([], [user('//a:u', '//a:friends')]).analyzeTopLevel('//a:u')).toThrow("package group '//a:friends' is misplaced here");
    expect(() => analyzer([], [user('//a:u', '//a:nope')]).analyzeTopLevel('//a:u')).toThrow(
      "in srcs attribute of filegroup rule //a:u: no such target '//a:nope'",
    );
  });

  it('dependency cycles are reported', () => {
    const x = rule('//c:x', 'filegroup', { srcs: ['//c:y'] });
    const y = rule('//c:y', 'filegroup', { srcs: ['//c:x'] });
    expect(() => analyzer([], [x, y]).analyzeTopLevel('//c:x')).toThrow('cycle in dependency graph');
  });
});

describe('target_compatible_with, platforms from the graph, deprecation', () => {
  const constraintTargets: AnalysisTarget[] = [
    rule('//plat:os', 'constraint_setting', {}),
    rule('//plat:linux', 'constraint_value', { constraint_setting: '//plat:os' }),
    rule('//plat:windows', 'constraint_value', { constraint_setting: ':os' }),
    rule('//plat:win', 'platform', { constraint_values: ['//plat:windows'] }),
    rule('//plat:win_child', 'platform', { constraint_values: [], parents: [':win'] }),
    rule('//a:win_only', 'filegroup', { srcs: ['//a:s1'], target_compatible_with: ['//plat:windows'] }),
    rule('//a:on_win_only', 'filegroup', { srcs: ['//a:win_only'] }),
    rule('//a:old', 'filegroup', { srcs: ['//a:s1'], deprecation: 'use //a:grp', visibility: ['//visibility:public'] }),
    rule('//b:uses_old', 'filegroup', { srcs: ['//a:old'] }),
  ];

  it('an incompatible target is an error when named directly and skipped under patterns; dependents are incompatible', () => {
    const a = analyzer([], constraintTargets);
    expect(() => a.analyzeTopLevel('//a:win_only')).toThrow(
      'Target //a:win_only is incompatible and cannot be built, but was explicitly requested.\nDependency chain:\n' +
        "    //a:win_only   <-- target platform (@local_config_platform//:host) didn't satisfy constraint //plat:windows",
    );
    expect(a.analyzeFromPattern('//a:win_only')).toBeUndefined();
    expect(a.analyzeFromPattern('//a:on_win_only')).toBeUndefined();
    expect(() => a.analyzeTopLevel('//a:on_win_only')).toThrow('Dependency chain:\n    //a:on_win_only\n    //a:win_only   <--');
  });

  it('platforms come from platform targets; --platforms makes the target compatible', async () => {
    const { platformDeclarationsFrom } = await import('../../../src/analysis/configured/platform-declarations.js');
    const { createConfigurations } = await import('../../../src/analysis/config/build-configuration.js');
    const { parseBuildOptions } = await import('../../../src/analysis/options/parse-build-options.js');
    const g = graph(constraintTargets);
    const configurations = createConfigurations(parseBuildOptions(['--platforms=//plat:win_child']).options, {
      host: { platform: 'linux', arch: 'x64' },
      platforms: platformDeclarationsFrom(g),
    });
    expect(configurations.target.platform.constraints.get('//plat:os')).toBe('//plat:windows');
    const a = new Analyzer(g, { configurations });
    expect(paths(a.analyzeTopLevel('//a:win_only').files)).toEqual(['a/s1']);
  });

  it('depending on a deprecated target from another package warns', () => {
    const warnings: string[] = [];
    new Analyzer(graph(constraintTargets), { configurations: configs([]), warn: (m, pos) => warnings.push(`${pos.file}: ${m}`) }).analyzeTopLevel(
      '//b:uses_old',
    );
    expect(warnings).toEqual(["/ws/b/BUILD: target '//b:uses_old' depends on deprecated target '//a:old': use //a:grp"]);
    const quiet: string[] = [];
    const alsoOld = rule('//b:also_old', 'filegroup', { srcs: ['//a:old'], deprecation: 'going too' });
    const samePackage = rule('//a:near_old', 'filegroup', { srcs: ['//a:old'] });
    const a = new Analyzer(graph([...constraintTargets, alsoOld, samePackage]), { configurations: configs([]), warn: (m) => quiet.push(m) });
    a.analyzeTopLevel('//b:also_old');
    a.analyzeTopLevel('//a:near_old');
    expect(quiet).toEqual([]);
  });
});

describe('sh rules', () => {
  const targets: AnalysisTarget[] = [
    source('//s:run.sh'),
    source('//s:lib.sh'),
    source('//s:data.txt'),
    rule('//s:lib', 'sh_library', { srcs: ['//s:lib.sh'], data: ['//s:data.txt'] }),
    rule('//s:bin', 'sh_binary', { srcs: ['//s:run.sh'], deps: ['//s:lib'] }),
    rule('//s:two', 'sh_binary', { srcs: ['//s:run.sh', '//s:lib.sh'] }),
    rule('//s:t', 'sh_test', { srcs: ['//s:run.sh'] }),
    rule('//s:uses_test', 'filegroup', { srcs: ['//s:t'] }),
  ];

  it('sh_library files and runfiles', () => {
    const lib = analyzer([], targets).analyzeTopLevel('//s:lib');
    expect(paths(lib.files)).toEqual(['s/lib.sh']);
    expect(paths(lib.runfiles)).toEqual(['s/lib.sh', 's/data.txt']);
  });

  it('sh_binary: the executable in bin, an in-process copy, runfiles of deps', () => {
    const bin = analyzer([], targets).analyzeTopLevel('//s:bin');
    expect(paths(bin.files)).toEqual(['bazel-out/k8-fastbuild/bin/s/bin']);
    expect(paths(bin.runfiles)).toEqual(['bazel-out/k8-fastbuild/bin/s/bin', 's/run.sh', 's/lib.sh', 's/data.txt']);
    expect(bin.actions[0]!.inProcess).toEqual({ kind: 'symlink', target: 's/run.sh' });
    expect(bin.actions[0]!.inputs.map((i) => i.execPath)).toEqual(['s/run.sh']);
    expect(bin.actions[0]!.outputs.map((o) => o.execPath)).toEqual(['bazel-out/k8-fastbuild/bin/s/bin']);
    expect(bin.actions[0]!.executableOutputs).toBe(true);
    expect(() => analyzer([], targets).analyzeTopLevel('//s:two')).toThrow(
      "in srcs attribute of sh_binary rule //s:two: you must specify exactly one file in 'srcs'",
    );
  });

  it('tests are testonly', () => {
    expect(analyzer([], targets).analyzeTopLevel('//s:t').testonly).toBe(true);
    expect(() => analyzer([], targets).analyzeTopLevel('//s:uses_test')).toThrow("depends on testonly target '//s:t'");
  });
});
