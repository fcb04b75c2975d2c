import { Depset, StarLabel } from '../../loading/index.js';
import {
  Builtin,
  None,
  StarCallable,
  StarList,
  StarObject,
  StarTuple,
  StarlarkError,
  Thread,
  str,
  typeName,
  unpackArgs,
  type Value,
} from '../../starlark/index.js';
import { shellQuote } from '../../core/index.js';
import type { TreeFileLister } from '../../actions/index.js';
import { FileValue } from './file-value.js';

export type ParamFileFormat = 'shell' | 'multiline' | 'flag_per_line';

/** How an Args object is passed: inline, or in a params file named on the command line. */
interface ParamFileSpec {
  /** `--flagfile=%s`: the argument that names the file. */
  readonly argument: string;
  readonly format: ParamFileFormat;
}

/** A File is its exec path on a command line; a Label its canonical form; anything else its str(). */
function argString(v: Value): string {
  if (v instanceof FileValue) return v.path;
  if (v instanceof StarLabel) return v.label.toString();
  return str(v);
}

function formatted(format: string | undefined, v: string): string {
  return format === undefined ? v : format.replace('%s', v);
}

/** A list is copied when added (later appends are not seen); a depset is kept whole and expanded later. */
function valuesOf(fn: string, v: Value): Depset | readonly Value[] {
  if (v instanceof Depset) return v;
  if (v instanceof StarList || v instanceof StarTuple) return [...v.elems];
  throw new StarlarkError(`${fn}: for parameter values: got ${typeName(v)}, want sequence or depset`);
}

function checkFormat(fn: string, param: string, format: Value | undefined): string | undefined {
  if (format === undefined || format === None) return undefined;
  if (typeof format !== 'string') throw new StarlarkError(`${fn}: for parameter ${param}: got ${typeName(format)}, want string`);
  if (format.split('%s').length !== 2) throw new StarlarkError(`Invalid value for parameter "${param}": Expected string with a single "%s", got "${format}"`);
  return format;
}

/** What add_all and add_joined share: the values and how each becomes strings. */
interface Vector {
  readonly argName: string | undefined;
  readonly values: Depset | readonly Value[];
  readonly mapEach: Value | undefined;
  readonly formatEach: string | undefined;
  readonly uniquify: boolean;
  readonly omitIfEmpty: boolean;
  /** `expand_directories` (default True): a directory File stands for the files inside it. */
  readonly expandDirectories: boolean;
}

/** One call's contribution to the command line, kept as given until the command line is read. */
type Piece =
  | { readonly kind: 'strings'; readonly strings: readonly string[] }
  | (Vector & { readonly kind: 'all'; readonly beforeEach: string | undefined; readonly terminateWith: string | undefined })
  | (Vector & { readonly kind: 'joined'; readonly joinWith: string; readonly formatJoined: string | undefined });

/**
 * Bazel's `Args` (`ctx.actions.args()`): a command line built piece by piece. As in Bazel, depsets
 * are kept unexpanded and `map_each` is not called during analysis: `expand` does both when the
 * command line is first read, which is when the action is keyed for execution.
 */
export class ArgsValue extends StarObject {
  private readonly pieces: Piece[] = [];
  paramFile: ParamFileSpec | undefined;
  private paramFileFormat: ParamFileFormat = 'shell';
  private frozenByAction = false;
  private expanded: readonly string[] | undefined;
  /** Whether the first expansion met a directory it would expand: only then does a later one with the trees differ. */
  private metDirectory = false;

  get type(): string {
    return 'Args';
  }

  /** Called when an action takes this object: later changes would not be seen, so they fail. */
  seal(): void {
    this.frozenByAction = true;
  }

  private checkMutable(fn: string): void {
    if (this.frozenByAction) throw new StarlarkError(`${fn}: cannot modify frozen Args`);
  }

  /** Whether the expansion met a directory to expand (read after `expand()`). */
  get holdsDirectory(): boolean {
    return this.metDirectory;
  }

  /**
   * The arguments, in order: depsets expanded and map_each called now, once. With `treeFiles`
   * (execution, once tree artifacts exist), a directory File of a vector that expands directories
   * stands for the files inside it, as separate File values; without it, for its own path.
   */
  expand(treeFiles?: TreeFileLister): readonly string[] {
    if (this.expanded && (!treeFiles || !this.metDirectory)) return this.expanded;
    const thread = new Thread('Args expansion');
    const expansion = { treeFiles, metDirectory: false };
    const out: string[] = [];
    for (const piece of this.pieces) {
      if (piece.kind === 'strings') {
        for (const s of piece.strings) out.push(s);
        continue;
      }
      const items = vectorItems(thread, piece, expansion);
      if (items.length === 0 && piece.omitIfEmpty) continue;
      if (piece.argName !== undefined) out.push(piece.argName);
      if (piece.kind === 'joined') {
        out.push(formatted(piece.formatJoined, items.join(piece.joinWith)));
        continue;
      }
      for (const item of items) {
        if (piece.beforeEach !== undefined) out.push(piece.beforeEach);
        out.push(item);
      }
      if (piece.terminateWith !== undefined) out.push(piece.terminateWith);
    }
    if (treeFiles) return out;
    this.expanded = out;
    this.metDirectory = expansion.metDirectory;
    return out;
  }

  /** The arguments shared by add_all and add_joined, checked now so a mistake names the call. */
  private vector(
    fn: string,
    first: Value,
    second: Value | undefined,
    mapEach: Value | undefined,
    formatEach: Value | undefined,
    omitIfEmpty: Value | undefined,
    uniquify: Value | undefined,
    expandDirectories: Value | undefined,
  ): Vector {
    const [argName, values] = second === undefined ? [undefined, first] : [first, second];
    if (mapEach !== undefined && mapEach !== None && !(mapEach instanceof StarCallable)) {
      throw new StarlarkError(`${fn}: for parameter map_each: got ${typeName(mapEach)}, want callable or NoneType`);
    }
    return {
      argName: argName === undefined ? undefined : argString(argName),
      values: valuesOf(fn, values),
      mapEach: mapEach === None ? undefined : mapEach,
      formatEach: checkFormat(fn, 'format_each', formatEach),
      uniquify: uniquify === true,
      omitIfEmpty: omitIfEmpty !== false,
      expandDirectories: expandDirectories !== false,
    };
  }

  override attr(name: string): Value | undefined {
    switch (name) {
      case 'add':
        return new Builtin('add', (_t, args, kwargs) => {
          this.checkMutable('add');
          const [first, second, format] = unpackArgs('add', args, kwargs, ['arg_name_or_value', 'value?', 'format?']);
          const checked = checkFormat('add', 'format', format);
          const strings = second !== undefined ? [argString(first!), formatted(checked, argString(second))] : [formatted(checked, argString(first!))];
          this.pieces.push({ kind: 'strings', strings });
          return this;
        });
      case 'add_all':
        return new Builtin('add_all', (_t, args, kwargs) => {
          this.checkMutable('add_all');
          const [first, second, mapEach, formatEach, beforeEach, omitIfEmpty, uniquify, expandDirectories, terminateWith] = unpackArgs(
            'add_all',
            args,
            kwargs,
            [
              'arg_name_or_values',
              'values?',
              'map_each?',
              'format_each?',
              'before_each?',
              'omit_if_empty?',
              'uniquify?',
              'expand_directories?',
              'terminate_with?',
              'allow_closure?',
            ],
          );
          this.pieces.push({
            kind: 'all',
            ...this.vector('add_all', first!, second, mapEach, formatEach, omitIfEmpty, uniquify, expandDirectories),
            beforeEach: beforeEach === undefined || beforeEach === None ? undefined : argString(beforeEach),
            terminateWith: terminateWith === undefined || terminateWith === None ? undefined : argString(terminateWith),
          });
          return this;
        });
      case 'add_joined':
        return new Builtin('add_joined', (_t, args, kwargs) => {
          this.checkMutable('add_joined');
          const [first, second, joinWith, mapEach, formatEach, formatJoined, omitIfEmpty, uniquify, expandDirectories] = unpackArgs(
            'add_joined',
            args,
            kwargs,
            [
              'arg_name_or_values',
              'values?',
              'join_with',
              'map_each?',
              'format_each?',
              'format_joined?',
              'omit_if_empty?',
              'uniquify?',
              'expand_directories?',
              'allow_closure?',
            ],
          );
          if (typeof joinWith !== 'string') throw new StarlarkError(`add_joined: for parameter join_with: got ${typeName(joinWith!)}, want string`);
          this.pieces.push({
            kind: 'joined',
            ...this.vector('add_joined', first!, second, mapEach, formatEach, omitIfEmpty, uniquify, expandDirectories),
            joinWith,
            formatJoined: checkFormat('add_joined', 'format_joined', formatJoined),
          });
          return this;
        });
      case 'use_param_file':
        return new Builtin('use_param_file', (_t, args, kwargs) => {
          this.checkMutable('use_param_file');
          const [argument] = unpackArgs('use_param_file', args, kwargs, ['param_file_arg', 'use_always?']);
          if (typeof argument !== 'string' || argument.split('%s').length !== 2) {
            throw new StarlarkError(
              `Invalid value for parameter "param_file_arg": Expected string with a single "%s", got "${typeof argument === 'string' ? argument : typeName(argument!)}"`,
            );
          }
          // Kiln always uses the params file once asked to (Bazel may inline a short command line).
          this.paramFile = { argument, format: this.paramFileFormat };
          return this;
        });
      case 'set_param_file_format':
        return new Builtin('set_param_file_format', (_t, args, kwargs) => {
          this.checkMutable('set_param_file_format');
          const [format] = unpackArgs('set_param_file_format', args, kwargs, ['format']);
          if (format !== 'shell' && format !== 'multiline' && format !== 'flag_per_line') {
            throw new StarlarkError(`Invalid value for parameter "format": Expected one of "shell", "multiline", "flag_per_line"`);
          }
          this.paramFileFormat = format;
          if (this.paramFile) this.paramFile = { ...this.paramFile, format };
          return this;
        });
      default:
        return undefined;
    }
  }

  override attrNames(): string[] {
    return ['add', 'add_all', 'add_joined', 'set_param_file_format', 'use_param_file'];
  }

  repr(): string {
    return `<Args>`;
  }
}

/** One expansion of an Args object: the trees' files (execution) and whether a directory was met. */
interface Expansion {
  readonly treeFiles: TreeFileLister | undefined;
  metDirectory: boolean;
}

/** The strings of one add_all / add_joined: directories expanded, map_each, then format_each, then uniquify. */
function vectorItems(thread: Thread, vector: Vector, expansion: Expansion): string[] {
  let values = vector.values instanceof Depset ? vector.values.toList() : vector.values;
  if (vector.expandDirectories && values.some(isDirectory)) {
    expansion.metDirectory = true;
    const treeFiles = expansion.treeFiles;
    if (treeFiles) values = values.flatMap((v) => (isDirectory(v) ? (v as FileValue).children(treeFiles(v.path)) : [v]));
  }
  let out: string[] = [];
  for (const v of values) {
    if (vector.mapEach === undefined) {
      out.push(argString(v));
      continue;
    }
    const mapped = thread.call(vector.mapEach, [v]);
    if (mapped === None) continue;
    if (mapped instanceof StarList || mapped instanceof StarTuple) for (const e of mapped.elems) out.push(argString(e));
    else if (typeof mapped === 'string') out.push(mapped);
    else throw new StarlarkError(`Expected map_each to return string, None, or list of strings, found ${typeName(mapped)}`);
  }
  out = out.map((s) => formatted(vector.formatEach, s));
  if (vector.uniquify) out = [...new Set(out)];
  return out;
}

function isDirectory(v: Value): v is FileValue {
  return v instanceof FileValue && v.isDirectory;
}

/** A params file's content in the chosen format (`shell` quotes each argument as Bazel does). */
export function paramFileContent(args: readonly string[], format: ParamFileFormat): string {
  if (format === 'shell') return args.map(shellQuote).join('\n') + (args.length > 0 ? '\n' : '');
  if (format === 'flag_per_line') {
    const lines: string[] = [];
    for (const a of args) {
      if (a.startsWith('--') && lines.length > 0 && !lines[lines.length - 1]!.startsWith('--')) lines.push(a);
      else if (!a.startsWith('--') && lines.length > 0 && lines[lines.length - 1]!.startsWith('--') && !lines[lines.length - 1]!.includes('='))
        lines[lines.length - 1] += `=${a}`;
      else lines.push(a);
    }
    return lines.join('\n') + (lines.length > 0 ? '\n' : '');
  }
  return args.join('\n') + (args.length > 0 ? '\n' : '');
}
