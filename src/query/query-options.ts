import { UsageError } from '../core/index.js';
import type { OrderOutput } from './output/index.js';
import { OUTPUT_FORMATTERS } from './output/index.js';
import { parseTargetPattern, TargetPatternError } from './target-pattern.js';

/** The options of `kiln query` (and of genquery's `opts`), with Bazel's names and defaults. */
export interface QueryOptionValues {
  output: string;
  orderOutput: OrderOutput;
  keepGoing: boolean;
  implicitDeps: boolean;
  toolDeps: boolean;
  universeScope: string[];
  queryFile: string | undefined;
  graphFactored: boolean;
  graphNodeLimit: number;
  graphConditionalEdgesLimit: number;
}

type OptionKind = 'bool' | 'string' | 'int' | 'list';

/** Each option: its kind and how a value applies. */
const OPTIONS: Readonly<Record<string, { kind: OptionKind; apply: (o: QueryOptionValues, v: string | boolean | number) => void }>> = {
  output: {
    kind: 'string',
    apply: (o, v) => {
      if (!OUTPUT_FORMATTERS.has(v as string))
        throw new UsageError(`Invalid output format '${v}'. Valid values are: ${[...OUTPUT_FORMATTERS.keys()].join(', ')}`);
      o.output = v as string;
    },
  },
  order_output: {
    kind: 'string',
    apply: (o, v) => {
      if (!['auto', 'no', 'deps', 'full'].includes(v as string)) {
        throw new UsageError(`While parsing option --order_output=${v}: Not a valid order output mode: '${v}' (should be one of: no, deps, auto, full)`);
      }
      o.orderOutput = v as OrderOutput;
    },
  },
  order_results: { kind: 'bool', apply: (o, v) => (o.orderOutput = v ? 'auto' : 'no') },
  keep_going: { kind: 'bool', apply: (o, v) => (o.keepGoing = v as boolean) },
  implicit_deps: { kind: 'bool', apply: (o, v) => (o.implicitDeps = v as boolean) },
  tool_deps: { kind: 'bool', apply: (o, v) => (o.toolDeps = v as boolean) },
  universe_scope: { kind: 'list', apply: (o, v) => (o.universeScope = universeScopeOf(v as string)) },
  query_file: { kind: 'string', apply: (o, v) => (o.queryFile = v as string) },
  'graph:factored': { kind: 'bool', apply: (o, v) => (o.graphFactored = v as boolean) },
  'graph:node_limit': { kind: 'int', apply: (o, v) => (o.graphNodeLimit = v as number) },
  'graph:conditional_edges_limit': { kind: 'int', apply: (o, v) => (o.graphConditionalEdgesLimit = v as number) },
};

/** `--universe_scope`: a comma-separated list of target patterns (Bazel's), each checked by the one target-pattern parser. */
function universeScopeOf(value: string): string[] {
  const patterns = value.split(',').filter((s) => s !== '');
  for (const pattern of patterns) {
    try {
      parseTargetPattern(pattern);
    } catch (e) {
      if (!(e instanceof TargetPatternError)) throw e;
      throw new UsageError(`While parsing option --universe_scope=${value}: ${e.message}`, undefined, { cause: e });
    }
  }
  return patterns;
}

export function defaultQueryOptions(): QueryOptionValues {
  return {
    output: 'label',
    orderOutput: 'auto',
    keepGoing: false,
    implicitDeps: true,
    toolDeps: true,
    universeScope: [],
    queryFile: undefined,
    graphFactored: true,
    graphNodeLimit: 512,
    graphConditionalEdgesLimit: 4,
  };
}

export interface ParsedQueryOptions {
  readonly options: QueryOptionValues;
  /** Words that are not options (the query), in order; everything after `--` included. */
  readonly residue: string[];
  /** The names of the options given (`keep_going` for -k and --nokeep_going alike). */
  readonly given: string[];
}

/**
 * Parses query options with Bazel's syntax: `--name=value`, `--name value`, booleans as `--name`,
 * `--noname` or `--name=true|false|yes|no|1|0`, `-k` for --keep_going, `--` ending the options.
 * Errors are UsageErrors.
 */
export function parseQueryOptions(args: readonly string[]): ParsedQueryOptions {
  const options = defaultQueryOptions();
  const residue: string[] = [];
  const given: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      for (const rest of args.slice(i + 1)) residue.push(rest);
      break;
    }
    if (a === '-k') {
      options.keepGoing = true;
      given.push('keep_going');
      continue;
    }
    if (!a.startsWith('--')) {
      if (a.startsWith('-') && a.length > 1) throw new UsageError(`Invalid options syntax: ${a}`);
      residue.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    let name = eq >= 0 ? a.slice(2, eq) : a.slice(2);
    let inline: string | undefined = eq >= 0 ? a.slice(eq + 1) : undefined;
    const takeValue = (): string => {
      if (inline !== undefined) return inline;
      const v = args[++i];
      if (v === undefined) throw new UsageError(`Expected value after --${name}`);
      return v;
    };
    let spec = OPTIONS[name];
    let negated = false;
    if (!spec && name.startsWith('no') && OPTIONS[name.slice(2)]?.kind === 'bool') {
      name = name.slice(2);
      spec = OPTIONS[name];
      negated = true;
      if (inline !== undefined) throw new UsageError(`Unexpected value after boolean option: ${a}`);
    }
    if (!spec) {
      throw new UsageError(`Unrecognized option: ${a}`);
    }
    given.push(name);
    switch (spec.kind) {
      case 'bool': {
        if (negated) spec.apply(options, false);
        else if (inline === undefined) spec.apply(options, true);
        else {
          const v = inline.toLowerCase();
          if (['true', 'yes', '1'].includes(v)) spec.apply(options, true);
          else if (['false', 'no', '0'].includes(v)) spec.apply(options, false);
          else throw new UsageError(`While parsing option ${a}: '${inline}' is not a boolean`);
        }
        break;
      }
      case 'int': {
        const v = takeValue();
        if (!/^-?[0-9]+$/.test(v)) throw new UsageError(`While parsing option --${name}=${v}: '${v}' is not an int`);
        spec.apply(options, Number(v));
        break;
      }
      default:
        spec.apply(options, takeValue());
    }
    inline = undefined;
  }
  return { options, residue, given };
}
