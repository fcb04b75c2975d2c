import { Depset, StarLabel } from '../../loading/index.js';
import { Builtin, None, StarList, StarObject, StarTuple, StarlarkError, str, typeName, unpackArgs, type Thread, type Value } from '../../starlark/index.js';
import { FileValue } from './file-value.js';

export type ParamFileFormat = 'shell' | 'multiline' | 'flag_per_line';

/** How an Args object is passed: inline, or in a params file named on the command line. */
export interface ParamFileSpec {
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

function formatted(fn: string, format: Value | undefined, v: string): string {
  if (format === undefined || format === None) return v;
  if (typeof format !== 'string') throw new StarlarkError(`${fn}: for parameter format: got ${typeName(format)}, want string`);
  if (format.split('%s').length !== 2) throw new StarlarkError(`Invalid value for parameter "format": Expected string with a single "%s", got "${format}"`);
  return format.replace('%s', v);
}

function elementsOf(fn: string, v: Value): readonly Value[] {
  if (v instanceof Depset) return v.toList();
  if (v instanceof StarList || v instanceof StarTuple) return v.elems;
  throw new StarlarkError(`${fn}: for parameter values: got ${typeName(v)}, want sequence or depset`);
}

/**
 * Bazel's `Args` (`ctx.actions.args()`): a command line built piece by piece. Depsets are expanded
 * when the piece is added (Kiln's actions carry their argv as data); the arguments are kept as
 * strings in order.
 */
export class ArgsValue extends StarObject {
  readonly args: string[] = [];
  paramFile: ParamFileSpec | undefined;
  private paramFileFormat: ParamFileFormat = 'shell';
  private frozenByAction = false;

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

  /** Items of add_all / add_joined after map_each, format_each and uniquify. */
  private items(thread: Thread, fn: string, values: Value, mapEach: Value | undefined, formatEach: Value | undefined, uniquify: Value | undefined): string[] {
    let out: string[] = [];
    for (const v of elementsOf(fn, values)) {
      if (mapEach !== undefined && mapEach !== None) {
        const mapped = thread.call(mapEach, [v]);
        if (mapped === None) continue;
        if (mapped instanceof StarList || mapped instanceof StarTuple) out.push(...mapped.elems.map(argString));
        else if (typeof mapped === 'string') out.push(mapped);
        else throw new StarlarkError(`Expected map_each to return string, None, or list of strings, found ${typeName(mapped)}`);
      } else out.push(argString(v));
    }
    out = out.map((s) => formatted(fn, formatEach, s));
    if (uniquify === true) out = [...new Set(out)];
    return out;
  }

  override attr(name: string): Value | undefined {
    switch (name) {
      case 'add':
        return new Builtin('add', (_t, args, kwargs) => {
          this.checkMutable('add');
          const [first, second, format] = unpackArgs('add', args, kwargs, ['arg_name_or_value', 'value?', 'format?']);
          if (second !== undefined) this.args.push(argString(first!), formatted('add', format, argString(second)));
          else this.args.push(formatted('add', format, argString(first!)));
          return this;
        });
      case 'add_all':
        return new Builtin('add_all', (thread, args, kwargs) => {
          this.checkMutable('add_all');
          const [first, second, mapEach, formatEach, beforeEach, omitIfEmpty, uniquify, , terminateWith] = unpackArgs('add_all', args, kwargs, [
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
          ]);
          const [argName, values] = second === undefined ? [undefined, first!] : [first!, second];
          const items = this.items(thread, 'add_all', values, mapEach, formatEach, uniquify);
          if (items.length === 0 && omitIfEmpty !== false) return this;
          if (argName !== undefined) this.args.push(argString(argName));
          for (const item of items) {
            if (beforeEach !== undefined && beforeEach !== None) this.args.push(argString(beforeEach));
            this.args.push(item);
          }
          if (terminateWith !== undefined && terminateWith !== None) this.args.push(argString(terminateWith));
          return this;
        });
      case 'add_joined':
        return new Builtin('add_joined', (thread, args, kwargs) => {
          this.checkMutable('add_joined');
          const [first, second, joinWith, mapEach, formatEach, formatJoined, omitIfEmpty, uniquify] = unpackArgs('add_joined', args, kwargs, [
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
          ]);
          if (typeof joinWith !== 'string') throw new StarlarkError(`add_joined: for parameter join_with: got ${typeName(joinWith!)}, want string`);
          const [argName, values] = second === undefined ? [undefined, first!] : [first!, second];
          const items = this.items(thread, 'add_joined', values, mapEach, formatEach, uniquify);
          if (items.length === 0 && omitIfEmpty !== false) return this;
          if (argName !== undefined) this.args.push(argString(argName));
          this.args.push(formatted('add_joined', formatJoined, items.join(joinWith)));
          return this;
        });
      case 'use_param_file':
        return new Builtin('use_param_file', (_t, args, kwargs) => {
          this.checkMutable('use_param_file');
          const [argument] = unpackArgs('use_param_file', args, kwargs, ['param_file_arg', 'use_always?']);
          if (typeof argument !== 'string' || argument.split('%s').length !== 2) {
            throw new StarlarkError(`Invalid value for parameter "param_file_arg": Expected string with a single "%s", got "${typeof argument === 'string' ? argument : typeName(argument!)}"`);
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

/** A params file's content in the chosen format (`shell` quotes each argument as Bazel does). */
export function paramFileContent(args: readonly string[], format: ParamFileFormat): string {
  if (format === 'shell') return args.map(shellQuote).join('\n') + (args.length > 0 ? '\n' : '');
  if (format === 'flag_per_line') {
    const lines: string[] = [];
    for (const a of args) {
      if (a.startsWith('--') && lines.length > 0 && !lines[lines.length - 1]!.startsWith('--')) lines.push(a);
      else if (!a.startsWith('--') && lines.length > 0 && lines[lines.length - 1]!.startsWith('--') && !lines[lines.length - 1]!.includes('=')) lines[lines.length - 1] += `=${a}`;
      else lines.push(a);
    }
    return lines.join('\n') + (lines.length > 0 ? '\n' : '');
  }
  return args.join('\n') + (args.length > 0 ? '\n' : '');
}

function shellQuote(s: string): string {
  if (s !== '' && /^[A-Za-z0-9_@%+=:,./-]+$/.test(s)) return s;
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
