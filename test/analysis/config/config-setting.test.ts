import { describe, expect, it } from 'vitest';
import { execFile, type StarDict, Thread } from '../../../src/starlark/index.js';
import { matchConfigSetting, type BuildSettingLookup } from '../../../src/analysis/config/config-matching.js';
import { ConfigSettingError, validateConfigSetting, type ConfigSettingDeclaration } from '../../../src/analysis/config/config-setting.js';
import type { BuildSettingDefinition } from '../../../src/analysis/options/user-defined-flag.js';
import { ARM64, configs, GLIBC, LINUX, OSX, X86_64 } from './config-fixture.js';

const BUILD_SETTINGS: readonly BuildSettingDefinition[] = [
  { label: '//flags:color', type: 'string', defaultValue: 'red', isFlag: true, allowedValues: ['red', 'blue'] },
  { label: '//flags:fast', type: 'bool', defaultValue: false, isFlag: true },
  { label: '//flags:level', type: 'int', defaultValue: 1, isFlag: true },
  { label: '//flags:langs', type: 'string_list', defaultValue: ['en'], isFlag: true },
  { label: '//flags:internal', type: 'string', defaultValue: 'x', isFlag: false },
];
const lookup: BuildSettingLookup = (l) => BUILD_SETTINGS.find((s) => s.label === l);

type Dict = Record<string, string>;
function decl(values: Dict = {}, more: Partial<ConfigSettingDeclaration> = {}): ConfigSettingDeclaration {
  return { label: '//c:s', values: Object.entries(values), ...more };
}

/** Does a config_setting with these attributes match the target configuration of this command line? */
function matchesTarget(d: ConfigSettingDeclaration, args: string[], rc: string[] = []): boolean {
  return matchConfigSetting(validateConfigSetting(d), configs(args, rc).target, lookup).matches;
}

describe('config_setting values', () => {
  it.each<[string, Dict, string[], boolean]>([
    ['full flag name matches the long form', { compilation_mode: 'opt' }, ['--compilation_mode=opt'], true],
    ['full flag name matches the short form', { compilation_mode: 'opt' }, ['-c', 'opt'], true],
    ['different value', { compilation_mode: 'opt' }, ['-c', 'dbg'], false],
    ['unset flag matches its default', { compilation_mode: 'fastbuild' }, [], true],
    ['unset flag does not match a non-default', { compilation_mode: 'opt' }, [], false],
    ['cpu defaults to the host cpu', { cpu: 'k8' }, [], true],
    ['cpu set explicitly', { cpu: 'arm' }, ['--cpu=arm'], true],
    ['boolean default', { stamp: 'false' }, [], true],
    ['boolean 1 matches --stamp', { stamp: '1' }, ['--stamp'], true],
    ['boolean no matches --nostamp', { stamp: 'no' }, ['--nostamp'], true],
    ['all entries must match', { compilation_mode: 'opt', cpu: 'arm' }, ['-c', 'opt'], false],
    ['all entries match', { compilation_mode: 'opt', cpu: 'arm' }, ['-c', 'opt', '--cpu=arm'], true],
    // A repeatable flag matches if any given setting matches.
    ['repeatable: any occurrence', { copt: '-DB' }, ['--copt=-DA', '--copt=-DB'], true],
    ['repeatable: none', { copt: '-DC' }, ['--copt=-DA', '--copt=-DB'], false],
    // copt keeps a comma-joined occurrence as one item.
    ['copt a,b is one item: matches --copt=a,b', { copt: 'a,b' }, ['--copt=a,b'], true],
    ['copt a,b is one item: not --copt=a --copt=b', { copt: 'a,b' }, ['--copt=a', '--copt=b'], false],
    ['copt a matches nothing inside a,b', { copt: 'a' }, ['--copt=a,b'], false],
    // ios_multi_cpus splits, so a,b is a set of items (the spec's a,b examples).
    ['ios_multi_cpus a,b vs a then b', { ios_multi_cpus: 'a,b' }, ['--ios_multi_cpus=a', '--ios_multi_cpus=b'], true],
    ['ios_multi_cpus a,b vs a then b then c', { ios_multi_cpus: 'a,b' }, ['--ios_multi_cpus=a', '--ios_multi_cpus=b', '--ios_multi_cpus=c'], true],
    ['ios_multi_cpus a,b vs a,b', { ios_multi_cpus: 'a,b' }, ['--ios_multi_cpus=a,b'], true],
    ['ios_multi_cpus a,b vs c,b,a', { ios_multi_cpus: 'a,b' }, ['--ios_multi_cpus=c,b,a'], true],
    ['ios_multi_cpus a,b vs a only', { ios_multi_cpus: 'a,b' }, ['--ios_multi_cpus=a'], false],
    ['ios_multi_cpus a,b vs a,a (count does not matter, set must)', { ios_multi_cpus: 'b,a,b' }, ['--ios_multi_cpus=a,b'], true],
    ['list flag: single item anywhere in the list', { ios_multi_cpus: 'b' }, ['--ios_multi_cpus=a,b,c'], true],
    ['list flag: empty expectation matches an unset list', { ios_multi_cpus: '' }, [], true],
    ['list flag: empty expectation does not match a set list', { ios_multi_cpus: '' }, ['--ios_multi_cpus=a'], false],
    ['non-repeatable list (platforms): item anywhere', { platforms: '//p:linux_arm' }, ['--platforms=//p:linux_arm'], true],
    ['features: one of several', { features: 'x' }, ['--features=y', '--features=x'], true],
    ['values define: KEY=VALUE', { define: 'a=1' }, ['--define=a=1'], true],
    ['values define: a later --define of the same name wins', { define: 'a=1' }, ['--define=a=1', '--define=a=2'], false],
    ['values define: absent', { define: 'a=1' }, [], false],
  ])('%s', (_name, values, args, expected) => {
    expect(matchesTarget(decl(values), args)).toBe(expected);
  });

  it('a key repeated in a dictionary keeps its last instance (entries in order)', () => {
    const d = { label: '//c:s', values: [['compilation_mode', 'dbg'] as const, ['compilation_mode', 'opt'] as const] };
    expect(matchesTarget(d, ['-c', 'opt'])).toBe(true);
    expect(matchesTarget(d, ['-c', 'dbg'])).toBe(false);
  });

  it('the same through the interpreter: dict() keeps the last value of a repeated key', () => {
    // A dict *literal* with a repeated key is a Starlark error (starlark-go, Bazel since 0.x); dict() of pairs is the
    // form that can still repeat a key, and it keeps the last value.
    const globals = execFile(new Thread('BUILD'), 'BUILD', 'v = dict([("compilation_mode", "dbg"), ("compilation_mode", "opt")])', new Map());
    const dict = globals.get('v') as StarDict;
    const entries = [...dict.iterate()].map((k) => [k as string, dict.get(k) as string] as const);
    expect(entries).toEqual([['compilation_mode', 'opt']]);
    expect(matchesTarget({ label: '//c:s', values: entries }, ['-c', 'opt'])).toBe(true);
    expect(() => execFile(new Thread('BUILD'), 'BUILD', 'v = {"cpu": "a", "cpu": "b"}', new Map())).toThrow('duplicate key');
  });

  it('the exec configuration matches by its own values (cpu from host_cpu, opt)', () => {
    const s = validateConfigSetting(decl({ cpu: 'k8', compilation_mode: 'opt' }));
    const { target, exec } = configs(['--cpu=arm', '--host_cpu=k8']);
    expect(matchConfigSetting(s, target, lookup).matches).toBe(false);
    expect(matchConfigSetting(s, exec, lookup).matches).toBe(true);
  });
});

describe('config_setting define_values', () => {
  it.each<[string, Partial<ConfigSettingDeclaration>, string[], boolean]>([
    ['one define', { defineValues: [['a', '1']] }, ['--define=a=1'], true],
    [
      'two defines, both passed',
      {
        defineValues: [
          ['a', '1'],
          ['b', '2'],
        ],
      },
      ['--define=a=1', '--define', 'b=2'],
      true,
    ],
    [
      'two defines, one passed',
      {
        defineValues: [
          ['a', '1'],
          ['b', '2'],
        ],
      },
      ['--define=a=1'],
      false,
    ],
    ['later --define wins', { defineValues: [['a', '2']] }, ['--define=a=1', '--define=a=2'], true],
    ['mixed with values', { values: [['compilation_mode', 'opt']], defineValues: [['a', '1']] }, ['-c', 'opt', '--define=a=1'], true],
    ['mixed with values, values fail', { values: [['compilation_mode', 'opt']], defineValues: [['a', '1']] }, ['--define=a=1'], false],
    ['mixed with values define', { values: [['define', 'b=2']], defineValues: [['a', '1']] }, ['--define=a=1', '--define=b=2'], true],
    [
      'repeated define name keeps the last',
      {
        defineValues: [
          ['a', '1'],
          ['a', '3'],
        ],
      },
      ['--define=a=3'],
      true,
    ],
  ])('%s', (_name, more, args, expected) => {
    expect(matchesTarget({ label: '//c:s', ...more }, args)).toBe(expected);
  });
});

describe('config_setting flag_values', () => {
  const withValues = (flagValues: [string, string][]) => decl({ compilation_mode: 'fastbuild' }, { flagValues });
  it.each<[string, [string, string][], string[], boolean]>([
    ['string flag from the command line', [['//flags:color', 'blue']], ['--//flags:color=blue'], true],
    ['string flag default', [['//flags:color', 'red']], [], true],
    ['string flag default does not match another value', [['//flags:color', 'blue']], [], false],
    ['bool flag, bare form', [['//flags:fast', 'true']], ['--//flags:fast'], true],
    ['bool flag, no form', [['//flags:fast', 'False']], ['--no//flags:fast'], true],
    ['bool flag, default', [['//flags:fast', '0']], [], true],
    ['int flag', [['//flags:level', '3']], ['--//flags:level=3'], true],
    ['int flag default', [['//flags:level', '1']], [], true],
    ['string_list: item anywhere', [['//flags:langs', 'fr']], ['--//flags:langs=de,fr'], true],
    ['string_list: a,b set', [['//flags:langs', 'fr,de']], ['--//flags:langs=de,it,fr'], true],
    ['string_list: missing item', [['//flags:langs', 'fr,es']], ['--//flags:langs=de,fr'], false],
    [
      'two flags',
      [
        ['//flags:color', 'blue'],
        ['//flags:fast', 'true'],
      ],
      ['--//flags:color=blue', '--//flags:fast'],
      true,
    ],
  ])('%s', (_name, flagValues, args, expected) => {
    expect(matchesTarget(withValues(flagValues), args)).toBe(expected);
  });

  it('a flag set in an rc file matches like one on the command line; the command line wins', () => {
    const d = withValues([['//flags:color', 'blue']]);
    expect(matchesTarget(d, [], ['--//flags:color=blue'])).toBe(true);
    expect(matchesTarget(d, ['--//flags:color=red'], ['--//flags:color=blue'])).toBe(false);
  });

  it('rejects a key that is not a build setting and a value the setting cannot hold', () => {
    expect(() => matchesTarget(withValues([['//flags:nope', 'x']]), [])).toThrow(
      "in flag_values attribute of config_setting rule //c:s: '//flags:nope' is not a build setting",
    );
    expect(() => matchesTarget(withValues([['//flags:color', 'green']]), [])).toThrow('invalid value \'green\'. Allowed values are ["red", "blue"]');
    expect(() => matchesTarget(withValues([['//flags:color', 'blue']]), ['--//flags:color=green'])).toThrow(
      "While parsing option //flags:color=green: invalid value 'green'",
    );
    expect(() => matchesTarget(withValues([['//flags:level', '1']]), ['--//flags:level'])).toThrow('Expected value after --//flags:level');
    expect(() => matchesTarget(withValues([['//flags:internal', 'x']]), ['--//flags:internal=y'])).toThrow('Unrecognized option: //flags:internal=y');
  });
});

describe('config_setting constraint_values', () => {
  const withConstraints = (constraintValues: (typeof LINUX)[]) => decl({}, { constraintValues });
  it.each<[string, (typeof LINUX)[], string[], boolean]>([
    ['host platform os', [LINUX], [], true],
    ['host platform os and cpu', [LINUX, X86_64], [], true],
    ['host lacks a constraint', [OSX], [], false],
    ['target platform from --platforms', [LINUX, ARM64], ['--platforms=//p:linux_arm'], true],
    ['extra platform constraints are ignored', [ARM64], ['--platforms=//p:linux_arm_glibc'], true],
    ['inherited and own constraints', [GLIBC, LINUX], ['--platforms=//p:linux_arm_glibc'], true],
    ['overridden parent constraint is gone', [LINUX], ['--platforms=//p:mac_arm'], false],
    ['the exec platform is not considered', [X86_64], ['--platforms=//p:linux_arm'], false],
  ])('%s', (_name, constraints, args, expected) => {
    expect(matchesTarget(withConstraints(constraints), args)).toBe(expected);
  });

  it('rejects two values of one setting', () => {
    expect(() => validateConfigSetting(withConstraints([LINUX, OSX]))).toThrow(
      'in constraint_values attribute of config_setting rule //c:s: Duplicate constraint values detected: constraint_setting @platforms//os:os has [@platforms//os:linux, @platforms//os:osx]',
    );
  });
});

describe('config_setting validation', () => {
  // The spec's sentence names values, define_values and constraint_values only; Bazel (2.1.0, 4.2.3 and
  // present-day ConfigSetting.valuesAreSet) also counts flag_values, and Bazel decides. Its message names
  // values, flag_values and constraint_values (define_values is merged into the values there).
  it('needs one of values, define_values, flag_values and constraint_values (Bazel: flag_values alone is enough)', () => {
    const message = 'in config_setting rule //c:s: Either values, flag_values or constraint_values must be specified and non-empty';
    expect(() => validateConfigSetting({ label: '//c:s' })).toThrow(message);
    expect(() => validateConfigSetting({ label: '//c:s', values: [], defineValues: [], flagValues: [], constraintValues: [] })).toThrow(ConfigSettingError);
    expect(validateConfigSetting({ label: '//c:s', flagValues: [['//flags:fast', 'true']] }).flagValues.get('//flags:fast')).toBe('true');
    expect(validateConfigSetting({ label: '//c:s', defineValues: [['a', '1']] }).defines.get('a')).toBe('1');
    expect(validateConfigSetting({ label: '//c:s', constraintValues: [LINUX] }).constraintValues).toEqual([LINUX]);
  });

  it('execution-only options are no build options: unknown to config_setting, as in Bazel', () => {
    expect(() => validateConfigSetting(decl({ jobs: '4' }))).toThrow("error while parsing configuration settings: unknown option: 'jobs'");
    expect(() => validateConfigSetting(decl({ spawn_strategy: 'local' }))).toThrow("unknown option: 'spawn_strategy'");
  });

  it('keys are full option names: the short form and dashes are unknown options', () => {
    expect(() => validateConfigSetting(decl({ c: 'opt' }))).toThrow(
      "in values attribute of config_setting rule //c:s: error while parsing configuration settings: unknown option: 'c'",
    );
    expect(() => validateConfigSetting(decl({ '--cpu': 'k8' }))).toThrow("unknown option: '--cpu' (keys are option names without dashes: 'cpu')");
  });

  it('values are read by the option converter', () => {
    expect(() => validateConfigSetting(decl({ compilation_mode: 'fast' }))).toThrow(
      "error while parsing configuration settings: Not a valid compilation mode: 'fast' (should be fastbuild, dbg or opt)",
    );
    expect(() => validateConfigSetting(decl({ stamp: 'maybe' }))).toThrow("'maybe' is not a boolean");
    expect(() => validateConfigSetting(decl({ define: 'novalue' }))).toThrow("Variable definitions must be in the form of a 'name=value' assignment");
  });

  it('a define name may not be given in both values and define_values', () => {
    expect(() => validateConfigSetting({ label: '//c:s', values: [['define', 'a=1']], defineValues: [['a', '2']] })).toThrow(
      "define 'a' is set both in values and in define_values",
    );
  });
});
