import { Depset } from '../../loading/index.js';
import {
  Builtin,
  None,
  StarDict,
  StarList,
  StarObject,
  StarStruct,
  StarTuple,
  StarlarkError,
  typeName,
  unpackArgs,
  type Kwargs,
  type Value,
} from '../../starlark/index.js';
import {
  executionRequirementsFromTags,
  execPropertiesOf,
  inProcessAction,
  type Action,
  type Artifact,
  type DerivedArtifact,
  type InProcessWork,
  type TreeFileLister,
} from '../../actions/index.js';
import { packageExecPathOf, packageOutputDir, rootPathOf, siblingLabel } from '../configured/target-paths.js';
import { ArgsValue, paramFileContent, type ParamFileFormat } from './args-value.js';
import { FileValue } from './file-value.js';

/** Where a rule's actions and declared files go. */
interface ActionOwner {
  readonly label: string;
  readonly ruleClass: string;
  readonly location: Action['location'];
  /** Output root for declared files (bin, or genfiles with `output_to_genfiles`). */
  readonly root: string;
  /**
   * Platform properties of the rule's spawned actions (execution platform's, then the target's
   * `exec_properties`), of the default exec group or of a named one (undefined: not a group of the rule).
   */
  readonly execProperties?: (group?: string) => readonly (readonly [string, string])[] | undefined;
  /** `rule(analysis_test = True)`: the implementation may register no action. */
  readonly analysisTest?: boolean;
}

const SIGNATURES: Readonly<Record<string, string>> = {
  write: 'write(output, content, is_executable = False)',
  run: 'run(outputs, inputs = [], unused_inputs_list = None, executable, tools = unbound, arguments = [], mnemonic = None, progress_message = None, use_default_shell_env = False, env = None, execution_requirements = None, input_manifests = None)',
  run_shell:
    'run_shell(outputs, inputs = [], tools = unbound, arguments = [], mnemonic = None, command, progress_message = None, use_default_shell_env = False, env = None, execution_requirements = None, input_manifests = None)',
  expand_template: 'expand_template(template, output, substitutions, is_executable = False)',
  symlink: 'symlink(output, target_file = None, target_path = None, is_executable = False, progress_message = None)',
  declare_file: 'declare_file(filename, sibling = None)',
  declare_directory: 'declare_directory(filename, sibling = None)',
  declare_symlink: 'declare_symlink(filename, sibling = None)',
};

/** Bazel 2.1's wording for an argument of the wrong type to a `ctx.actions` method. */
function wrongType(method: string, param: string, want: string): StarlarkError {
  return new StarlarkError(`expected value of type '${want}' for parameter '${param}', for call to method ${SIGNATURES[method]} of 'actions'`);
}

function isSet(v: Value | undefined): v is Value {
  return v !== undefined && v !== None;
}

/**
 * The files and actions one rule implementation declares (`ctx.actions`). Declared files must be
 * made by exactly one action; `check()` reports the ones no action makes and outputs made twice.
 */
export class ActionRegistry {
  readonly actions: Action[] = [];
  private readonly declared = new Map<string, FileValue>();
  private readonly producers = new Map<string, Action[]>();

  constructor(readonly owner: ActionOwner) {}

  /**
   * A file of this rule under its package's output directory (or beside `sibling`): a regular file,
   * a directory (tree artifact) or an unresolved symlink, as `type` says.
   */
  declare(method: string, filename: string, sibling: FileValue | undefined, type?: DerivedArtifact['type']): FileValue {
    if (filename === '' || filename.startsWith('/') || filename.split('/').some((s) => s === '..' || s === '.' || s === '')) {
      throw new StarlarkError(`${method}: invalid file name '${filename}': must be a relative path without '.' or '..' segments`);
    }
    let execPath = `${packageOutputDir(this.owner.root, this.owner.label)}/${filename}`;
    let rootPath = rootPathOf(siblingLabel(this.owner.label, filename));
    if (sibling) {
      // Beside the sibling, always under this rule's output root: a source file's sibling goes to the
      // same directory below bin, never into the source tree.
      const siblingDir = sibling.path.slice(0, Math.max(0, sibling.path.lastIndexOf('/')));
      const dir = sibling.artifact.kind === 'source' ? (siblingDir === '' ? this.owner.root : `${this.owner.root}/${siblingDir}`) : siblingDir;
      execPath = `${dir}/${filename}`;
      rootPath = `${sibling.entry.rootPath.slice(0, sibling.entry.rootPath.lastIndexOf('/') + 1)}${filename}`;
      // As Bazel: a rule writes only into its own package's output directory (or a subpackage's).
      const siblingRoot = sibling.artifact.kind === 'derived' ? sibling.artifact.root : this.owner.root;
      const fragment = execPath.slice(siblingRoot.length + 1);
      const pkgDir = packageExecPathOf(this.owner.label);
      if (pkgDir !== '' && fragment !== pkgDir && !fragment.startsWith(`${pkgDir}/`)) {
        throw new StarlarkError(`${method}: the output artifact '${fragment}' is not under package directory '${pkgDir}' for target '${this.owner.label}'`);
      }
    }
    let file = this.declared.get(execPath);
    if (!file) {
      const artifact: DerivedArtifact = { kind: 'derived', execPath, root: this.owner.root, owner: this.owner.label, ...(type ? { type } : {}) };
      file = new FileValue({ artifact, rootPath }, this.owner.label);
      this.declared.set(execPath, file);
    } else if ((file.artifact.kind === 'derived' ? file.artifact.type : undefined) !== type) {
      throw new StarlarkError(`${method}: '${rootPath}' is already declared as ${describeKind(file)}`);
    }
    return file;
  }

  /** A file the rule owns already (output attributes, implicit outputs, the executable). */
  adopt(file: FileValue): void {
    this.declared.set(file.path, file);
  }

  isDeclared(file: FileValue): boolean {
    return this.declared.get(file.path) !== undefined;
  }

  register(action: Action): void {
    if (this.owner.analysisTest) {
      throw new StarlarkError(
        'implementation function of a rule with analysis_test=true may not register actions. Analysis test rules may only return success/failure information via AnalysisTestResultInfo.',
      );
    }
    this.actions.push(action);
    for (const o of action.outputs) {
      const list = this.producers.get(o.execPath) ?? [];
      list.push(action);
      this.producers.set(o.execPath, list);
    }
  }

  /** Bazel's checks after the implementation: every declared file made, none made twice. */
  check(configurationId: string): string | undefined {
    for (const [path, actions] of this.producers) {
      if (actions.length < 2) continue;
      const file = this.declared.get(path);
      return (
        `file '${file?.entry.rootPath ?? path}' is generated by these conflicting actions:\n` +
        `Label: ${this.owner.label}\nRuleClass: ${this.owner.ruleClass} rule\nConfiguration: ${configurationId}\n` +
        `Mnemonic: ${actions.map((a) => a.mnemonic).join(', ')}\nProgress message: ${actions.map((a) => a.progressMessage).join(', ')}\n` +
        `PrimaryOutput: ${path}`
      );
    }
    const missing = [...this.declared.values()].filter((f) => !this.producers.has(f.path)).map((f) => f.entry.rootPath);
    if (missing.length > 0) return `\n\n\nThe following files have no generating action:\n${missing.join('\n')}`;
    return undefined;
  }
}

/** How Bazel names what a File was declared as, in symlink()'s messages. */
function describeKind(file: FileValue): 'a directory' | 'a symlink' | 'a regular file' {
  return file.isDirectory ? 'a directory' : file.isSymlink ? 'a symlink' : 'a regular file';
}

/** The declare_* method that makes a File of this kind. */
function declareMethodOf(file: FileValue): string {
  return file.isDirectory ? 'declare_directory()' : file.isSymlink ? 'declare_symlink()' : 'declare_file()';
}

/** Files of `inputs`/`tools`: a list of Files, a depset of Files, or FilesToRunProviders. */
function filesOf(method: string, param: string, v: Value | undefined, out: Artifact[], allowFilesToRun: boolean): void {
  if (!isSet(v)) return;
  const elems = v instanceof Depset ? v.toList() : v instanceof StarList || v instanceof StarTuple ? v.elems : undefined;
  if (!elems) throw wrongType(method, param, 'sequence of Files or depset of Files');
  for (const e of elems) {
    if (e instanceof FileValue) out.push(e.artifact);
    else if (e instanceof Depset && allowFilesToRun) filesOf(method, param, e, out, false);
    else if (allowFilesToRun && e instanceof StarStruct && e.attr('executable') instanceof FileValue) out.push((e.attr('executable') as FileValue).artifact);
    else throw wrongType(method, param, 'sequence of Files or depset of Files');
  }
}

function stringDict(method: string, param: string, v: Value | undefined): [string, string][] {
  if (!isSet(v)) return [];
  if (!(v instanceof StarDict)) throw wrongType(method, param, 'dict or NoneType');
  const out: [string, string][] = [];
  for (const k of v.iterate()) {
    const x = v.get(k)!;
    if (typeof k !== 'string' || typeof x !== 'string') throw wrongType(method, param, 'dict of strings');
    out.push([k, x]);
  }
  return out;
}

/** The artifacts in order, each exec path once. */
function uniqueArtifacts(artifacts: readonly Artifact[]): Artifact[] {
  if (artifacts.length < 2) return [...artifacts];
  const seen = new Set<string>();
  return artifacts.filter((i) => (seen.has(i.execPath) ? false : (seen.add(i.execPath), true)));
}

/**
 * The action with `arguments` after its argv head. Args pieces are expanded (and `map_each` called)
 * when execution first reads argv; an action with plain strings only stays plain data, which the
 * analysis cache serializes on its fast path.
 */
function withArguments(action: Action, head: readonly string[], args: readonly (string | ArgsValue)[]): Action {
  if (args.every((a): a is string => typeof a === 'string')) return { ...action, argv: [...head, ...args] };
  let argv: readonly string[] | undefined;
  const expanded = (): readonly string[] => (argv ??= [...head, ...args.flatMap((a) => (typeof a === 'string' ? [a] : a.expand()))]);
  return Object.defineProperties(
    { ...action },
    {
      argv: { get: expanded, enumerable: true },
      // Present only when the Args met a directory (known once argv is expanded): a function keeps
      // the action out of the analysis cache, which the common action without trees stays in.
      argvWithTrees: {
        get: (): ((treeFiles: TreeFileLister) => readonly string[]) | undefined => {
          expanded();
          if (!args.some((a) => typeof a !== 'string' && a.holdsDirectory)) return undefined;
          return (treeFiles) => [...head, ...args.flatMap((a) => (typeof a === 'string' ? [a] : a.expand(treeFiles)))];
        },
        enumerable: true,
      },
    },
  );
}

/** Bazel's `ctx.actions`. */
export class ActionsValue extends StarObject {
  private paramFiles = 0;

  constructor(readonly registry: ActionRegistry) {
    super();
  }

  get type(): string {
    return 'actions';
  }

  private outputFile(method: string, param: string, v: Value | undefined): FileValue {
    if (!(v instanceof FileValue)) throw wrongType(method, param, 'File');
    if (v.artifact.kind !== 'derived' || !this.registry.isDeclared(v)) {
      throw new StarlarkError(`${method}: output '${v.entry.rootPath}' is not a file declared by ${this.registry.owner.label}`);
    }
    return v;
  }

  private outputFiles(method: string, v: Value | undefined): FileValue[] {
    if (!(v instanceof StarList || v instanceof StarTuple)) throw wrongType(method, 'outputs', 'sequence of Files');
    if (v.elems.length === 0) throw new StarlarkError(`${method}: param 'outputs' may not be empty`);
    return v.elems.map((e) => this.outputFile(method, 'outputs', e));
  }

  private progress(message: Value | undefined, fallback: string, outputs: readonly FileValue[], inputs: readonly Artifact[]): string {
    if (!isSet(message)) return fallback;
    if (typeof message !== 'string') throw new StarlarkError(`progress_message: got ${typeName(message)}, want string`);
    if (!message.includes('%{')) return message;
    return message
      .replace(/%\{label\}/g, this.registry.owner.label)
      .replace(/%\{output\}/g, outputs[0]?.path ?? '')
      .replace(/%\{input\}/g, inputs[0]?.execPath ?? '');
  }

  private inProcess(mnemonic: string, progressMessage: string, output: FileValue, inputs: Artifact[], work: InProcessWork, executable: boolean): void {
    const { label: owner, location } = this.registry.owner;
    this.registry.register(
      inProcessAction({ owner, location, mnemonic, progressMessage, output: output.artifact as DerivedArtifact, work, inputs, executable }),
    );
  }

  /**
   * The pieces of `arguments`: strings, and Args expanded only when the action's argv is read; Args
   * with a params file become one argument naming a file written from them.
   */
  private commandLine(method: string, v: Value | undefined, firstOutput: FileValue, inputs: Artifact[]): (string | ArgsValue)[] {
    if (!isSet(v)) return [];
    if (!(v instanceof StarList || v instanceof StarTuple)) throw wrongType(method, 'arguments', 'sequence');
    const out: (string | ArgsValue)[] = [];
    for (const a of v.elems) {
      if (typeof a === 'string') out.push(a);
      else if (a instanceof FileValue) out.push(a.path);
      else if (a instanceof ArgsValue) {
        a.seal();
        if (!a.paramFile) {
          out.push(a);
          continue;
        }
        const params = this.registry.declare(
          'params',
          `${firstOutput.entry.rootPath.slice(firstOutput.entry.rootPath.lastIndexOf('/') + 1)}-${++this.paramFiles}.params`,
          firstOutput,
        );
        this.inProcess('FileWrite', `Writing file ${params.entry.rootPath}`, params, [], lazyWrite(a, a.paramFile.format), false);
        inputs.push(params.artifact);
        out.push(a.paramFile.argument.replace('%s', params.path));
      } else throw wrongType(method, 'arguments', 'sequence of strings or Args');
    }
    return out;
  }

  private spawn(method: 'run' | 'run_shell', kwargs: Map<string, Value>, argvHead: (inputs: Artifact[]) => string[], defaultMnemonic: string): void {
    const outputs = this.outputFiles(method, kwargs.get('outputs'));
    const inputs: Artifact[] = [];
    filesOf(method, 'inputs', kwargs.get('inputs'), inputs, false);
    filesOf(method, 'tools', kwargs.get('tools'), inputs, true);
    const head = argvHead(inputs);
    const args = this.commandLine(method, kwargs.get('arguments'), outputs[0]!, inputs);
    const mnemonic = kwargs.get('mnemonic');
    if (isSet(mnemonic) && typeof mnemonic !== 'string') throw wrongType(method, 'mnemonic', 'string or NoneType');
    const requirements = stringDict(method, 'execution_requirements', kwargs.get('execution_requirements')).map(([k]) => k);
    const env = Object.fromEntries(stringDict(method, 'env', kwargs.get('env')));
    const name = typeof mnemonic === 'string' ? mnemonic : defaultMnemonic;
    const group = kwargs.get('exec_group');
    if (isSet(group) && typeof group !== 'string') throw wrongType(method, 'exec_group', 'string or NoneType');
    const platform = this.registry.owner.execProperties?.(isSet(group) ? group : undefined) ?? [];
    if (isSet(group) && !this.registry.owner.execProperties?.(group)) {
      throw new StarlarkError(`Action declared for non-existent exec group '${group}'.`);
    }
    const action: Action = {
      owner: this.registry.owner.label,
      ...(this.registry.owner.location ? { location: this.registry.owner.location } : {}),
      mnemonic: name,
      progressMessage: this.progress(kwargs.get('progress_message'), `${name} ${outputs[0]!.entry.rootPath}`, outputs, inputs),
      argv: head,
      env,
      inputs: uniqueArtifacts(inputs),
      outputs: outputs.map((o) => o.artifact as DerivedArtifact),
      executionRequirements: requirements.length === 0 ? [] : executionRequirementsFromTags(requirements),
      executableOutputs: false,
      ...execPropertiesOf(platform),
    };
    this.registry.register(args.length === 0 ? action : withArguments(action, head, args));
  }

  /** Methods are made once per rule (an implementation calls them in loops). */
  private readonly methods = new Map<string, Value>();

  override attr(name: string): Value | undefined {
    let method = this.methods.get(name);
    if (method === undefined) {
      method = this.method(name);
      if (method !== undefined) this.methods.set(name, method);
    }
    return method;
  }

  private method(name: string): Value | undefined {
    switch (name) {
      case 'declare_file':
      case 'declare_directory':
      case 'declare_symlink':
        return new Builtin(name, (_t, args, kwargs) => {
          const [filename, sibling] = unpackArgs(name, args, kwargs, ['filename', 'sibling?']);
          if (typeof filename !== 'string') throw wrongType(name, 'filename', 'string');
          if (isSet(sibling) && !(sibling instanceof FileValue)) throw wrongType(name, 'sibling', 'File or NoneType');
          const type = name === 'declare_directory' ? 'directory' : name === 'declare_symlink' ? 'symlink' : undefined;
          return this.registry.declare(name, filename, isSet(sibling) ? sibling : undefined, type);
        });
      case 'write':
        return new Builtin('write', (_t, args, kwargs) => {
          const [output, content, isExecutable] = unpackArgs('write', args, kwargs, ['output', 'content', 'is_executable?']);
          const file = this.outputFile('write', 'output', output);
          let work: InProcessWork;
          if (typeof content === 'string') work = { kind: 'write', content };
          else if (content instanceof ArgsValue) {
            content.seal();
            work = lazyWrite(content, content.paramFile?.format ?? 'shell');
          } else throw wrongType('write', 'content', 'string or Args');
          if (isSet(isExecutable) && typeof isExecutable !== 'boolean') throw wrongType('write', 'is_executable', 'bool');
          this.inProcess('FileWrite', `Writing file ${file.entry.rootPath}`, file, [], work, isExecutable === true);
          return None;
        });
      case 'expand_template':
        return new Builtin('expand_template', (_t, args, kwargs) => {
          const [template, output, substitutions, isExecutable] = unpackArgs('expand_template', args, kwargs, [
            'template',
            'output',
            'substitutions?',
            'is_executable?',
            'computed_substitutions?',
          ]);
          if (!(template instanceof FileValue)) throw wrongType('expand_template', 'template', 'File');
          const file = this.outputFile('expand_template', 'output', output);
          const subs = stringDict('expand_template', 'substitutions', substitutions);
          this.inProcess(
            'TemplateExpand',
            `Expanding template ${file.entry.rootPath}`,
            file,
            [template.artifact],
            { kind: 'expand_template', template: template.path, substitutions: subs },
            isExecutable === true,
          );
          return None;
        });
      case 'symlink':
        return new Builtin('symlink', (_t, args, kwargs) => {
          const [output, target, targetPath, isExecutable, progressMessage] = unpackArgs('symlink', args, kwargs, [
            'output',
            'target_file?',
            'target_path?',
            'is_executable?',
            'progress_message?',
          ]);
          const file = this.outputFile('symlink', 'output', output);
          if (isSet(target) === isSet(targetPath)) throw new StarlarkError('Exactly one of "target_file" or "target_path" is required');
          if (isSet(isExecutable) && typeof isExecutable !== 'boolean') throw wrongType('symlink', 'is_executable', 'bool');
          if (isSet(targetPath)) {
            if (typeof targetPath !== 'string') throw wrongType('symlink', 'target_path', 'string or NoneType');
            if (!file.isSymlink) {
              const declared = file.isDirectory ? 'directory' : 'regular file';
              throw new StarlarkError(
                `symlink() with "target_path" param requires that "output" be declared as a symlink, not a ${declared} (did you mean to use declare_symlink() instead of ${declareMethodOf(file)}?)`,
              );
            }
            const message = this.progress(progressMessage, `Creating symlink ${file.entry.rootPath}`, [file], []);
            this.inProcess('UnresolvedSymlink', message, file, [], { kind: 'unresolved_symlink', targetPath }, false);
            return None;
          }
          if (!(target instanceof FileValue)) throw wrongType('symlink', 'target_file', 'File or NoneType');
          if (file.isSymlink) {
            throw new StarlarkError(
              'symlink() with "target_file" param requires that "output" be declared as a file or directory, not a symlink (did you mean to use declare_file() or declare_directory() instead of declare_symlink()?)',
            );
          }
          if (target.isDirectory !== file.isDirectory) {
            const want = target.isDirectory ? 'directory' : 'file';
            throw new StarlarkError(
              `symlink() with "target_file" ${want} param requires that "output" be declared as a ${want} (did you mean to use declare_${want}() instead of ${declareMethodOf(file)}?)`,
            );
          }
          const message = this.progress(progressMessage, `Symlinking ${file.entry.rootPath}`, [file], [target.artifact]);
          const work: InProcessWork = target.isDirectory ? { kind: 'copy_directory', target: target.path } : { kind: 'symlink', target: target.path };
          this.inProcess('Symlink', message, file, [target.artifact], work, isExecutable === true);
          return None;
        });
      case 'run':
        return new Builtin('run', (_t, args, kwargs) => {
          const named = keywordsOnly('run', args, kwargs);
          const executable = named.get('executable');
          this.spawn(
            'run',
            named,
            (inputs) => {
              if (typeof executable === 'string') return [executable];
              const file = executable instanceof StarStruct ? executable.attr('executable') : executable;
              if (!(file instanceof FileValue)) throw wrongType('run', 'executable', 'File or string or FilesToRunProvider');
              inputs.push(file.artifact);
              return [file.path];
            },
            'Action',
          );
          return None;
        });
      case 'run_shell':
        return new Builtin('run_shell', (_t, args, kwargs) => {
          const named = keywordsOnly('run_shell', args, kwargs);
          const command = named.get('command');
          this.spawn(
            'run_shell',
            named,
            () => {
              if (typeof command === 'string') return ['/bin/bash', '-c', command, ''];
              if (command instanceof StarList || command instanceof StarTuple) {
                return command.elems.map((e) => {
                  if (typeof e !== 'string') throw wrongType('run_shell', 'command', 'string or sequence of strings');
                  return e;
                });
              }
              throw wrongType('run_shell', 'command', 'string or sequence of strings');
            },
            'Action',
          );
          return None;
        });
      case 'args':
        return new Builtin('args', (_t, args, kwargs) => {
          unpackArgs('args', args, kwargs, []);
          return new ArgsValue();
        });
      case 'do_nothing':
        return new Builtin('do_nothing', (_t, args, kwargs) => {
          unpackArgs('do_nothing', args, kwargs, ['mnemonic', 'inputs?']);
          return None;
        });
      default:
        return undefined;
    }
  }

  override attrNames(): string[] {
    return ['args', 'declare_directory', 'declare_file', 'declare_symlink', 'do_nothing', 'expand_template', 'run', 'run_shell', 'symlink', 'write'];
  }

  repr(): string {
    return 'actions';
  }
}

const RUN_PARAMS: Readonly<Record<'run' | 'run_shell', readonly string[]>> = {
  run: [
    'outputs',
    'inputs',
    'unused_inputs_list',
    'executable',
    'tools',
    'arguments',
    'mnemonic',
    'progress_message',
    'use_default_shell_env',
    'env',
    'execution_requirements',
    'input_manifests',
    'exec_group',
    'shadowed_action',
    'resource_set',
    'toolchain',
  ],
  run_shell: [
    'outputs',
    'inputs',
    'tools',
    'arguments',
    'mnemonic',
    'command',
    'progress_message',
    'use_default_shell_env',
    'env',
    'execution_requirements',
    'input_manifests',
    'exec_group',
    'shadowed_action',
    'resource_set',
    'toolchain',
  ],
};

/** run and run_shell take keyword arguments only (Bazel's signature), `outputs` and the program mandatory. */
const OPTIONAL_RUN_PARAMS = {
  run: RUN_PARAMS.run.map((p) => `${p}?`),
  run_shell: RUN_PARAMS.run_shell.map((p) => `${p}?`),
};

function keywordsOnly(method: 'run' | 'run_shell', args: Value[], kwargs: Kwargs | null): Map<string, Value> {
  if (args.length > 0) throw new StarlarkError(`${method}: got ${args.length} positional arguments, want 0`);
  const params = RUN_PARAMS[method];
  const got = unpackArgs(method, args, kwargs, OPTIONAL_RUN_PARAMS[method]);
  const named = new Map<string, Value>();
  params.forEach((p, i) => {
    if (got[i] !== undefined) named.set(p, got[i]!);
  });
  for (const required of ['outputs', method === 'run' ? 'executable' : 'command']) {
    if (!named.has(required)) throw new StarlarkError(`${method}: missing argument for ${required}`);
  }
  return named;
}

/** A file written from Args: its content is made from them when execution first reads it. */
function lazyWrite(args: ArgsValue, format: ParamFileFormat): InProcessWork {
  let content: string | undefined;
  return {
    kind: 'write',
    get content(): string {
      return (content ??= paramFileContent(args.expand(), format));
    },
  };
}
