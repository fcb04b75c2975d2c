import fc from 'fast-check';
import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/core/index.js';
import { bindUserFlagValues, BuildOptionsParser, canonicalFlagLabel, parseBuildOptions } from '../../../src/analysis/options/parse-build-options.js';
import { BUILD_OPTIONS } from '../../../src/analysis/options/build-option-registry.js';
import { formatDuration, OptionRegistry } from '../../../src/core/options/index.js';

function usageMessage(args: string[]): string {
  try {
    parseBuildOptions(args);
  } catch (e) {
    expect(e).toBeInstanceOf(UsageError);
    return (e as Error).message;
  }
  throw new Error(`expected a UsageError for ${args.join(' ')}`);
}

describe('parseBuildOptions', () => {
  it('reads --flag=value, --flag value and -c value', () => {
    const { options, residue } = parseBuildOptions(['--cpu=arm', '--host_cpu', 'k8', '-c', 'opt', '//a:b']);
    expect(options.getString('cpu')).toBe('arm');
    expect(options.getString('host_cpu')).toBe('k8');
    expect(options.getString('compilation_mode')).toBe('opt');
    expect(residue).toEqual(['//a:b']);
  });

  it('uses defaults for options not given', () => {
    const { options } = parseBuildOptions([]);
    expect(options.getString('compilation_mode')).toBe('fastbuild');
    expect(options.getBool('stamp')).toBe(false);
    expect(options.getBool('build')).toBe(true);
    expect(options.getList('copt')).toEqual([]);
    expect(options.isSet('compilation_mode')).toBe(false);
  });

  it('reads booleans: --flag, --noflag, --flag=false|no|0|true|yes|1', () => {
    const read = (arg: string) => parseBuildOptions([arg]).options.getBool('keep_going');
    expect(read('--keep_going')).toBe(true);
    expect(read('--nokeep_going')).toBe(false);
    for (const w of ['false', 'no', '0', 'False']) expect(read(`--keep_going=${w}`)).toBe(false);
    for (const w of ['true', 'yes', '1']) expect(read(`--keep_going=${w}`)).toBe(true);
    expect(parseBuildOptions(['-k']).options.getBool('keep_going')).toBe(true);
    expect(parseBuildOptions(['--nobuild']).options.getBool('build')).toBe(false);
  });

  it('a boolean does not consume the next word', () => {
    const { options, residue } = parseBuildOptions(['--keep_going', '//x']);
    expect(options.getBool('keep_going')).toBe(true);
    expect(residue).toEqual(['//x']);
  });

  it('a later single-valued option wins; repeated options accumulate', () => {
    const { options } = parseBuildOptions(['-c', 'dbg', '--compilation_mode=opt', '--copt=-O1', '--copt', '-DX=1,2']);
    expect(options.getString('compilation_mode')).toBe('opt');
    expect(options.getList('copt')).toEqual(['-O1', '-DX=1,2']);
  });

  it('copt keeps a,b as one item; ios_multi_cpus splits it', () => {
    const { options } = parseBuildOptions(['--copt=a,b', '--ios_multi_cpus=a,b', '--ios_multi_cpus=c']);
    expect(options.getList('copt')).toEqual(['a,b']);
    expect(options.getList('ios_multi_cpus')).toEqual(['a', 'b', 'c']);
  });

  it('--define accumulates and the later value of a name wins', () => {
    const { options } = parseBuildOptions(['--define=a=1', '--define', 'b=x=y', '--define=a=2']);
    expect(options.getList('define')).toEqual(['a=1', 'b=x=y', 'a=2']);
    expect([...options.defines()]).toEqual([
      ['a', '2'],
      ['b', 'x=y'],
    ]);
  });

  it('--strategy is repeatable Mnemonic=strategy', () => {
    const { options } = parseBuildOptions(['--strategy=Genrule=local', '--strategy=CppCompile=sandboxed', '--spawn_strategy=remote']);
    expect(options.getList('strategy')).toEqual(['Genrule=local', 'CppCompile=sandboxed']);
    expect(options.getString('spawn_strategy')).toBe('remote');
  });

  it('--jobs takes an int or auto', () => {
    expect(parseBuildOptions(['-j', '8']).options.getInt('jobs')).toBe(8);
    expect(parseBuildOptions(['--jobs=auto']).options.getInt('jobs')).toBe(0);
  });

  it('-- ends the options', () => {
    const { options, residue } = parseBuildOptions(['--keep_going', '--', '--cpu=arm', '-//x:y']);
    expect(options.isSet('cpu')).toBe(false);
    expect(residue).toEqual(['--cpu=arm', '-//x:y']);
  });

  it('reads user-defined flags', () => {
    const { options } = parseBuildOptions(['--//pkg:flag=v', '--no//pkg:b', '--@repo//x:y=1', '--//short', '--//pkg:flag=w']);
    expect([...options.userFlags.values()]).toEqual([
      { label: '//pkg:flag', value: 'w', negated: false },
      { label: '//pkg:b', value: undefined, negated: true },
      { label: '@repo//x:y', value: '1', negated: false },
      { label: '//short:short', value: undefined, negated: false },
    ]);
  });

  // Observed from Bazel 2.1.0: `bazel build --//a:f blue //a:useflag` set the string flag to "blue".
  it('a bare non-boolean user-defined flag takes the next word once its type is known', () => {
    const parsed = parseBuildOptions(['--//a:f', 'blue', '--//a:b', '//t:x', '--//a:g', '--keep_going']);
    expect(parsed.residue).toEqual(['blue', '//t:x']);
    const types: Record<string, string> = { '//a:f': 'string', '//a:b': 'bool', '//a:g': 'int' };
    const bound = bindUserFlagValues(parsed, (l) => types[l]);
    expect(bound.residue).toEqual(['//t:x']);
    expect(bound.options.userFlags.get('//a:f')).toEqual({ label: '//a:f', value: 'blue', negated: false });
    expect(bound.options.userFlags.get('//a:b')).toEqual({ label: '//a:b', value: undefined, negated: false });
    // Followed by an option, the bare form stays bare (userFlagValue then reports a missing value).
    expect(bound.options.userFlags.get('//a:g')).toEqual({ label: '//a:g', value: undefined, negated: false });
  });

  it('canonicalises flag labels', () => {
    expect(canonicalFlagLabel('//a/b')).toBe('//a/b:b');
    expect(canonicalFlagLabel('@r//a:c')).toBe('@r//a:c');
    expect(canonicalFlagLabel('@@r//a:c')).toBe('@r//a:c');
    expect(canonicalFlagLabel('@r')).toBe('@r//:r');
    expect(canonicalFlagLabel('//:x')).toBe('//:x');
    expect(canonicalFlagLabel('a:b')).toBeUndefined();
    expect(canonicalFlagLabel('//a:')).toBeUndefined();
  });

  it('sources parsed in order: rc lines first, then the command line', () => {
    const { options } = new BuildOptionsParser().parse(['--copt=rc', '-c', 'dbg']).parse(['--copt=cli', '-c', 'opt']).result();
    expect(options.getList('copt')).toEqual(['rc', 'cli']);
    expect(options.getString('compilation_mode')).toBe('opt');
  });

  // Messages observed from Bazel 2.1.0 (`bazel build <flag> //a:grp`, see src/analysis/README.md).
  it.each([
    [['--foo'], 'Unrecognized option: --foo'],
    [['--foo=1'], 'Unrecognized option: --foo=1'],
    [['-x'], 'Unrecognized option: -x'],
    [['-c', 'foo'], "While parsing option -c foo: Not a valid compilation mode: 'foo' (should be fastbuild, dbg or opt)"],
    [['--compilation_mode=x'], "While parsing option --compilation_mode=x: Not a valid compilation mode: 'x' (should be fastbuild, dbg or opt)"],
    [['--nokeep_going=1'], 'Unexpected value after boolean option: --nokeep_going=1'],
    [['--nocopt'], "Illegal use of 'no' prefix on non-boolean option: --nocopt"],
    [['--keep_going=maybe'], "While parsing option --keep_going=maybe: 'maybe' is not a boolean"],
    [['--define', 'foo'], "While parsing option --define foo: Variable definitions must be in the form of a 'name=value' assignment"],
    [['-cc'], 'Invalid options syntax: -cc'],
    [['--cpu'], 'Expected value after --cpu'],
    [['-c'], 'Expected value after -c'],
    [['--no//a:b=1'], 'Unexpected value after boolean option: --no//a:b=1'],
    [['--//a:'], 'Unrecognized option: --//a:'],
  ])('%j is a usage error: %s', (args, message) => {
    expect(usageMessage(args)).toBe(message);
  });

  it('a short form and the full name set the same option', () => {
    expect(parseBuildOptions(['-c', 'opt']).options.fingerprint()).toBe(parseBuildOptions(['--compilation_mode=opt']).options.fingerprint());
  });

  it('the fingerprint leaves out execution-only options (configurations do not depend on them)', () => {
    const plain = parseBuildOptions(['--define=a=1']).options.fingerprint();
    expect(parseBuildOptions(['--define=a=1', '--jobs=7', '-k', '--spawn_strategy=local', '--disk_cache=/tmp/x']).options.fingerprint()).toBe(plain);
    expect(parseBuildOptions(['--define=a=2']).options.fingerprint()).not.toBe(plain);
  });

  it('every registered option parses its default back (round trip)', () => {
    for (const def of BUILD_OPTIONS.definitions()) {
      if (def.type === 'list' || (def.type === 'string' && def.default === '')) continue;
      // A default that only a keyword spells (--jobs=auto) is written as that keyword.
      const keyword = def.type === 'int' ? Object.entries(def.keywords ?? {}).find(([, v]) => v === def.default)?.[0] : undefined;
      // A duration's default (in ms) is written as a flag would be (60s).
      const text = def.type === 'duration' ? formatDuration(def.default) : (keyword ?? String(def.default));
      const { options } = parseBuildOptions([`--${def.name}=${text}`]);
      expect(options.get(def.name)).toEqual(def.default);
    }
  });

  it('any argv gives a result or a UsageError (property)', () => {
    const word = fc.oneof(
      fc.string({ maxLength: 12 }),
      fc.constantFrom('--', '-', '-c', '-k', '--cpu', '--copt', '--define', '--nokeep_going', '--no', '--//', '--no//a', '--@', '--=', '-j'),
      fc.tuple(fc.constantFrom('--', '-', '--no', '--//', '--@'), fc.string({ maxLength: 10 })).map(([a, b]) => a + b),
      fc.tuple(fc.constantFrom(...BUILD_OPTIONS.names()), fc.string({ maxLength: 6 })).map(([n, v]) => `--${n}=${v}`),
    );
    fc.assert(
      fc.property(fc.array(word, { maxLength: 8 }), (args) => {
        try {
          const { options, residue } = parseBuildOptions(args);
          expect(Array.isArray(residue)).toBe(true);
          options.fingerprint();
        } catch (e) {
          if (!(e instanceof UsageError)) throw e;
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe('options Kiln accepts but does not implement', () => {
  it('one marked as an error (ignoring it would build something else) is refused, naming the flag as written', () => {
    const registry = new OptionRegistry([
      {
        name: 'remote_only_thing',
        type: 'list',
        default: [],
        allowMultiple: true,
        converter: 'whole',
        help: 'h',
        notImplemented: { severity: 'error', reason: 'not supported by Kiln' },
      },
    ]);
    const message = (args: string[]) => {
      try {
        parseBuildOptions(args, registry);
      } catch (e) {
        if (e instanceof UsageError) return e.message;
      }
      throw new Error('expected a UsageError');
    };
    expect(message(['--remote_only_thing=/x'])).toBe('--remote_only_thing=/x: not supported by Kiln');
    expect(message(['--remote_only_thing', '/y'])).toBe('--remote_only_thing /y: not supported by Kiln');
    // Its default (an rc file clearing it) is accepted.
    expect(parseBuildOptions([], registry).warnings).toEqual([]);
  });

  it('tolerated ones warn once, and setting one to its default (an rc file clearing it) is silent', () => {
    const parsed = parseBuildOptions(['--sandbox_debug', '--nosandbox_debug', '--sandbox_debug', '--build_runfile_links', '--nobuild_runfile_links', '//a']);
    expect(parsed.warnings).toEqual([
      "--sandbox_debug: Kiln's sandbox builds each action's execroot in its own memory, so there is no sandbox directory to keep; a failure's message already names the command (see --verbose_failures); ignored",
      '--nobuild_runfile_links: it has no effect in Kiln yet; ignored',
    ]);
    expect(parsed.residue).toEqual(['//a']);
    expect(parseBuildOptions(['--build_runfile_links', '--nosandbox_debug']).warnings).toEqual([]);
  });

  it('every marked option says why', () => {
    const marked = [...BUILD_OPTIONS.definitions()].filter((d) => d.notImplemented);
    expect(marked.map((d) => d.name)).toContain('build_runfile_links');
    for (const def of marked) expect(def.notImplemented!.reason.length).toBeGreaterThan(10);
  });
});

describe('--jobs follows Bazel', () => {
  it("rejects values below 1 and above 5000 in Bazel's words", () => {
    expect(usageMessage(['--jobs=-3'])).toBe("While parsing option --jobs=-3: Value '(-3)' must be at least 1.");
    expect(usageMessage(['-j', '0'])).toBe("While parsing option -j 0: Value '(0)' must be at least 1.");
    expect(usageMessage(['--jobs=5001'])).toBe("While parsing option --jobs=5001: Value '(5001)' must be at most 5000.");
    expect(usageMessage(['--jobs=x'])).toMatch(
      /^While parsing option --jobs=x: Parameter 'x' does not follow correct syntax\. This flag takes an integer, or a keyword \("auto", "HOST_CPUS", "HOST_RAM"\)/,
    );
  });

  it('takes auto, HOST_CPUS and HOST_RAM with an operation', () => {
    expect(parseBuildOptions(['--jobs=auto']).options.getInt('jobs')).toBe(0);
    expect(parseBuildOptions(['--jobs=5000']).options.getInt('jobs')).toBe(5000);
    expect(parseBuildOptions(['--jobs=HOST_CPUS']).options.getInt('jobs')).toBe(availableParallelism());
    expect(parseBuildOptions(['--jobs=HOST_CPUS*2']).options.getInt('jobs')).toBe(availableParallelism() * 2);
    expect(parseBuildOptions(['--jobs=HOST_RAM*.001']).options.getInt('jobs')).toBeGreaterThan(0);
  });
});

// Bazel's RemoteDurationConverter: a bare number is seconds; else <n>(d|h|m|s|ms); held in ms.
describe('duration options (--remote_timeout, --remote_retry_max_delay)', () => {
  it.each([
    ['60', 60_000],
    ['0', 0],
    ['2s', 2000],
    ['100ms', 100],
    ['5m', 300_000],
    ['1h', 3_600_000],
    ['1d', 86_400_000],
  ])('reads %s as %d ms', (text, ms) => {
    expect(parseBuildOptions([`--remote_timeout=${text}`]).options.getDurationMs('remote_timeout')).toBe(ms);
  });

  it("defaults to Bazel's 60s and 5s", () => {
    const { options } = parseBuildOptions([]);
    expect(options.getDurationMs('remote_timeout')).toBe(60_000);
    expect(options.getDurationMs('remote_retry_max_delay')).toBe(5000);
  });

  it.each(['-1', '1.5s', '10x', 's', ''])('refuses %j as Bazel does', (text) => {
    expect(usageMessage([`--remote_retry_max_delay=${text}`])).toBe(`While parsing option --remote_retry_max_delay=${text}: Illegal duration '${text}'.`);
  });
});
