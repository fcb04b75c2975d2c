import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/core/index.js';
import { OptionRegistry, OptionsParser, optionsHelp, parseOptions, type OptionDefinition } from '../../../src/core/options/index.js';

const TABLE: readonly OptionDefinition[] = [
  { name: 'keep_going', abbrev: 'k', type: 'bool', default: false, help: 'Go on.' },
  { name: 'color', type: 'string', default: 'auto', triState: true, help: 'Colours.' },
  { name: 'mode', abbrev: 'c', type: 'string', default: 'fast', allowed: { values: ['fast', 'opt'], describe: 'mode' }, help: 'The mode.' },
  { name: 'jobs', type: 'int', default: 4, min: 1, max: 8, help: 'Jobs.' },
  { name: 'env', type: 'list', default: [], allowMultiple: true, converter: 'whole', help: 'Env.' },
  { name: 'scope', type: 'list', default: [], allowMultiple: false, converter: 'comma', help: 'Scope.' },
];
const REGISTRY = new OptionRegistry(TABLE);

function usage(args: readonly string[]): string {
  try {
    parseOptions(REGISTRY, args);
  } catch (e) {
    expect(e).toBeInstanceOf(UsageError);
    return (e as Error).message;
  }
  throw new Error(`expected a UsageError for ${args.join(' ')}`);
}

describe('the one options parser', () => {
  it('reads every form of Bazel syntax, keeping the other words in order', () => {
    const { values, residue, occurrences } = parseOptions(REGISTRY, [
      '-k',
      'a',
      '--mode',
      'opt',
      '--jobs=2',
      '--env=A',
      '--env',
      'B',
      'b',
      '--nocolor',
      '--',
      '--jobs=9',
    ]);
    expect(values.getBool('keep_going')).toBe(true);
    expect(values.getString('mode')).toBe('opt');
    expect(values.getInt('jobs')).toBe(2);
    expect(values.getList('env')).toEqual(['A', 'B']);
    expect(values.getString('color')).toBe('no');
    expect(residue).toEqual(['a', 'b', '--jobs=9']);
    expect(occurrences.map((o) => o.written)).toEqual(['-k', '--mode opt', '--jobs=2', '--env=A', '--env B', '--nocolor']);
  });

  it('gives defaults for what was not given, and later sources win for single values', () => {
    const { values } = new OptionsParser(REGISTRY).parse(['--jobs=3', '--scope=a,b', '--env=rc']).parse(['--jobs=5', '--scope=c', '--env=cli']).result();
    expect(values.getInt('jobs')).toBe(5);
    expect(values.getList('scope')).toEqual(['c']);
    expect(values.getList('env')).toEqual(['rc', 'cli']);
    expect(values.isSet('mode')).toBe(false);
    expect(values.getString('mode')).toBe('fast');
  });

  it('reports malformed words in Bazel words', () => {
    expect(usage(['--bogus'])).toBe('Unrecognized option: --bogus');
    expect(usage(['-x'])).toBe('Unrecognized option: -x');
    expect(usage(['-kk'])).toBe('Invalid options syntax: -kk');
    expect(usage(['--jobs'])).toBe('Expected value after --jobs');
    expect(usage(['--nojobs'])).toBe("Illegal use of 'no' prefix on non-boolean option: --nojobs");
    expect(usage(['--nokeep_going=1'])).toBe('Unexpected value after boolean option: --nokeep_going=1');
    expect(usage(['--keep_going=maybe'])).toBe("While parsing option --keep_going=maybe: 'maybe' is not a boolean");
    expect(usage(['--jobs=9'])).toBe("While parsing option --jobs=9: Value '(9)' must be at most 8.");
    expect(usage(['-c', 'slow'])).toBe("While parsing option -c slow: Not a valid mode: 'slow' (should be fast or opt)");
    expect(usage(['--color=sometimes'])).toBe("While parsing option --color=sometimes: 'sometimes' is not one of 'auto', 'yes', 'no'");
  });

  it("lets a handler take words the table does not have (the build options' --//pkg:flag)", () => {
    const taken: string[] = [];
    const parser = new OptionsParser(REGISTRY, (o) => {
      if (!o.name.startsWith('//')) return false;
      taken.push(`${o.name}=${o.inlineValue} next=${o.next} at ${o.residueIndex}`);
      return true;
    });
    const { residue } = parser.parse(['x', '--//p:f=1', 'y']).result();
    expect(taken).toEqual(['//p:f=1 next=y at 1']);
    expect(residue).toEqual(['x', 'y']);
    expect(() => new OptionsParser(REGISTRY, () => false).parse(['--//p:f'])).toThrow('Unrecognized option: --//p:f');
  });

  it("prints the table in Bazel's help layout, sorted", () => {
    const help = optionsHelp(TABLE);
    expect(help.split('\n').filter((l) => l.startsWith('  --'))).toEqual([
      '  --[no]color (a tri-state (auto, yes, no); default: "auto")',
      '  --env (a string; may be used multiple times)',
      '  --jobs (an integer; default: "4")',
      '  --[no]keep_going [-k] (a boolean; default: "false")',
      '  --mode [-c] (fast, opt; default: "fast")',
      '  --scope (comma-separated list of options)',
    ]);
  });

  it('refuses a table that names an option or an abbreviation twice', () => {
    expect(() => new OptionRegistry([...TABLE, { name: 'jobs', type: 'int', default: 1, help: '' }])).toThrow('option --jobs is registered twice');
    expect(() => new OptionRegistry([...TABLE, { name: 'other', abbrev: 'k', type: 'bool', default: false, help: '' }])).toThrow(
      'abbreviation -k is registered twice',
    );
  });
});
