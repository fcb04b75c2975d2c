import {
  Builtin,
  None,
  StarCallable,
  StarDict,
  StarList,
  StarModule,
  type StarObject,
  StarStruct,
  StarTuple,
  StarlarkError,
  typeName,
  unpackArgs,
  type Kwargs,
  type Thread,
  type Value,
} from '../starlark/index.js';
import { Depset } from './depset.js';

let unexported = 0;

/**
 * A provider: Bazel's `provider()` result, or one of the built-in providers (DefaultInfo,
 * OutputGroupInfo...). Calling it makes an instance; its `key` identifies it across threads
 * (`//pkg:defs.bzl%MyInfo` once exported, so targets can be asked `dep[MyInfo]`).
 */
export class Provider extends StarCallable {
  private exportedName: string | undefined;
  private exportedKey: string;

  constructor(
    readonly doc: string,
    /** Allowed field names (from `fields`), or undefined for any; with their docs. */
    readonly fields: ReadonlyMap<string, string> | undefined,
    /** `init`: receives the call's arguments and returns the dict of fields. */
    readonly init: Value | undefined,
    builtinName?: string,
  ) {
    super();
    this.exportedName = builtinName;
    this.exportedKey = builtinName ?? `<unexported provider ${++unexported}>`;
  }

  get name(): string {
    return this.exportedName ?? 'provider';
  }
  get type(): string {
    return 'Provider';
  }
  get key(): string {
    return this.exportedKey;
  }
  get isExported(): boolean {
    return this.exportedName !== undefined;
  }

  /** A provider takes the name and key of the first global it is bound to. */
  export(name: string, bzlLabel: string): void {
    if (this.exportedName !== undefined) return;
    this.exportedName = name;
    this.exportedKey = `${bzlLabel}%${name}`;
  }

  call(thread: Thread, args: Value[], kwargs: Kwargs | null): Value {
    if (this.init === undefined) return this.instantiate(args, kwargs);
    const result = thread.call(this.init, args, kwargs);
    if (!(result instanceof StarDict)) throw new StarlarkError(`init for provider ${this.name} must return a dict, got ${typeName(result)}`);
    const fields: Kwargs = [];
    for (const k of result.iterate()) {
      if (typeof k !== 'string') throw new StarlarkError(`init for provider ${this.name} must return a dict with string keys, got ${typeName(k)}`);
      fields.push([k, result.get(k)!]);
    }
    return this.instantiate([], fields);
  }

  /** The raw constructor: fields checked against the schema, no `init`. */
  instantiate(args: Value[], kwargs: Kwargs | null): ProviderInstance {
    if (args.length > 0) throw new StarlarkError(`${this.name}: unexpected positional arguments`);
    const fields = kwargs ?? [];
    if (this.fields) {
      for (const [k] of fields) {
        if (!this.fields.has(k)) throw new StarlarkError(`got unexpected field '${k}' in call to instantiate provider ${this.name}`);
      }
    }
    return new ProviderInstance(this, fields);
  }

  rawConstructor(): Builtin {
    return new Builtin(`<raw constructor for ${this.name}>`, (_t, args, kwargs) => this.instantiate(args, kwargs));
  }

  repr(): string {
    return `<provider>`;
  }
}

/** An instance of a provider: a struct (printed and compared like one) that knows its provider. */
export class ProviderInstance extends StarStruct {
  constructor(
    readonly provider: Provider,
    fields: Iterable<[string, Value]>,
  ) {
    super(fields);
  }
  field(name: string): Value | undefined {
    return this.attr(name);
  }
  override missingAttrMessage(name: string): string {
    return `'${this.provider.name}' value has no field or method '${name}'\nAvailable attributes: ${this.names.join(', ')}`;
  }
  override equals(other: StarObject, depth: number): boolean {
    return other instanceof ProviderInstance && other.provider === this.provider && super.equals(other, depth);
  }
}

function fieldNames(v: Value | undefined): Map<string, string> | undefined {
  if (v === undefined || v === None) return undefined;
  const out = new Map<string, string>();
  if (v instanceof StarList || v instanceof StarTuple) {
    for (const e of v.elems) {
      if (typeof e !== 'string') throw new StarlarkError(`provider: for parameter fields: got ${typeName(e)} in the list, want string`);
      out.set(e, '');
    }
    return out;
  }
  if (v instanceof StarDict) {
    for (const k of v.iterate()) {
      const doc = v.get(k)!;
      if (typeof k !== 'string' || typeof doc !== 'string') throw new StarlarkError('provider: for parameter fields: want a dict of string to string');
      out.set(k, doc);
    }
    return out;
  }
  throw new StarlarkError(`provider: for parameter fields: got ${typeName(v)}, want list, dict or None`);
}

/** `provider(doc = "", *, fields = None, init = None)`; with `init` it returns (provider, raw constructor). */
export const providerBuiltin = new Builtin('provider', (_t, args, kwargs) => {
  const [doc, fields, init] = unpackArgs('provider', args, kwargs, ['doc?', 'fields?', 'init?']);
  if (doc !== undefined && doc !== None && typeof doc !== 'string') throw new StarlarkError(`provider: for parameter doc: got ${typeName(doc)}, want string`);
  if (init !== undefined && init !== None && !(init instanceof StarCallable))
    throw new StarlarkError(`provider: for parameter init: got ${typeName(init)}, want callable or None`);
  const p = new Provider(typeof doc === 'string' ? doc : '', fieldNames(fields), init === None ? undefined : init);
  return init === undefined || init === None ? p : new StarTuple([p, p.rawConstructor()]);
});

/** Bazel's parameter type error: `in call to DefaultInfo(), parameter 'files' got value of type 'list', want 'depset or NoneType'`. */
export function wantType(provider: string, param: string, v: Value, ok: boolean, want: string): void {
  if (!ok) throw new StarlarkError(`in call to ${provider}(), parameter '${param}' got value of type '${typeName(v)}', want '${want}'`);
}

/**
 * A built-in provider whose fields are checked when it is made (DefaultInfo's `files` must be a
 * depset...). `check` validates one field; unknown fields are rejected as for `provider(fields)`.
 */
export class BuiltinProvider extends Provider {
  constructor(
    name: string,
    fields: readonly string[] | undefined,
    private readonly check: (name: string, v: Value) => void = () => {},
  ) {
    super('', fields ? new Map(fields.map((f) => [f, ''])) : undefined, undefined, name);
  }
  override instantiate(args: Value[], kwargs: Kwargs | null): ProviderInstance {
    if (args.length > 0) throw new StarlarkError(`${this.name}: unexpected positional arguments`);
    const fields = (kwargs ?? []).filter(([, v]) => v !== None);
    for (const [k, v] of kwargs ?? []) {
      if (this.fields && !this.fields.has(k)) throw new StarlarkError(`${this.name}: unexpected keyword argument '${k}'`);
      if (v !== None) this.check(k, v);
    }
    return new ProviderInstance(this, fields);
  }
}

/** `DefaultInfo(files, runfiles, data_runfiles, default_runfiles, executable)`. */
export const DEFAULT_INFO = new BuiltinProvider('DefaultInfo', ['files', 'runfiles', 'data_runfiles', 'default_runfiles', 'executable'], (name, v) => {
  if (name === 'files') wantType('DefaultInfo', name, v, v instanceof Depset, 'depset or NoneType');
  else if (name === 'executable') wantType('DefaultInfo', name, v, typeof v === 'object' && v.type === 'File', 'File or NoneType');
  else wantType('DefaultInfo', name, v, typeof v === 'object' && v.type === 'runfiles', 'runfiles or NoneType');
});

/** `OutputGroupInfo(name = depset, ...)`: lists are accepted and kept as depsets, as Bazel does. */
export const OUTPUT_GROUP_INFO = new (class extends BuiltinProvider {
  override instantiate(args: Value[], kwargs: Kwargs | null): ProviderInstance {
    if (args.length > 0) throw new StarlarkError('OutputGroupInfo: unexpected positional arguments');
    const fields: [string, Value][] = (kwargs ?? []).map(([k, v]) => {
      if (v instanceof Depset) return [k, v];
      if (v instanceof StarList || v instanceof StarTuple) return [k, Depset.of('default', v.elems, [])];
      throw new StarlarkError(`Output group '${k}' is of unexpected type. Should be list or depset, but is '${typeName(v)}'`);
    });
    return new ProviderInstance(this, fields);
  }
})('OutputGroupInfo', undefined);

/** Accepted so coverage-aware rules load and run; Kiln does not collect coverage from it. */
export const INSTRUMENTED_FILES_INFO = new BuiltinProvider('InstrumentedFilesInfo', undefined);

function isStringDict(v: Value): boolean {
  return v instanceof StarDict && [...v.iterate()].every((k) => typeof k === 'string' && typeof v.get(k) === 'string');
}

function isStringSequence(v: Value): boolean {
  return (v instanceof StarList || v instanceof StarTuple) && v.elems.every((e) => typeof e === 'string');
}

/**
 * `RunEnvironmentInfo(environment = {}, inherited_environment = [])`: the environment `bazel run` and
 * `bazel test` give an executable or test rule's program. Both fields are always present.
 */
export const RUN_ENVIRONMENT_INFO = new (class extends BuiltinProvider {
  override instantiate(args: Value[], kwargs: Kwargs | null): ProviderInstance {
    const [environment, inherited] = unpackArgs('RunEnvironmentInfo', args, kwargs, ['environment?', 'inherited_environment?']);
    const env = environment === undefined || environment === None ? new StarDict() : environment;
    const inh = inherited === undefined || inherited === None ? new StarList([]) : inherited;
    wantType('RunEnvironmentInfo', 'environment', env, isStringDict(env), 'dict of strings');
    wantType('RunEnvironmentInfo', 'inherited_environment', inh, isStringSequence(inh), 'sequence of strings');
    return new ProviderInstance(this, [
      ['environment', env],
      ['inherited_environment', inh],
    ]);
  }
})('RunEnvironmentInfo', ['environment', 'inherited_environment']);

/** `AnalysisTestResultInfo(success, message)`: what an analysis test rule returns. */
export const ANALYSIS_TEST_RESULT_INFO = new (class extends BuiltinProvider {
  override instantiate(args: Value[], kwargs: Kwargs | null): ProviderInstance {
    const [success, message] = unpackArgs('AnalysisTestResultInfo', args, kwargs, ['success', 'message']);
    wantType('AnalysisTestResultInfo', 'success', success!, typeof success === 'boolean', 'bool');
    wantType('AnalysisTestResultInfo', 'message', message!, typeof message === 'string', 'string');
    return new ProviderInstance(this, [
      ['success', success!],
      ['message', message!],
    ]);
  }
})('AnalysisTestResultInfo', ['success', 'message']);

/**
 * `AnalysisFailureInfo`: `causes`, a depset of AnalysisFailure values (each with `label` and `message`),
 * what a target that failed analysis carries under `--allow_analysis_failures`.
 */
export const ANALYSIS_FAILURE_INFO = new BuiltinProvider('AnalysisFailureInfo', ['causes'], (name, v) => {
  if (name === 'causes') wantType('AnalysisFailureInfo', name, v, v instanceof Depset, 'depset');
});

/** The providers every .bzl file sees by name. */
export const BUILTIN_PROVIDERS: ReadonlyMap<string, Provider> = new Map<string, Provider>([
  ['DefaultInfo', DEFAULT_INFO],
  ['OutputGroupInfo', OUTPUT_GROUP_INFO],
  ['InstrumentedFilesInfo', INSTRUMENTED_FILES_INFO],
  ['RunEnvironmentInfo', RUN_ENVIRONMENT_INFO],
  ['AnalysisTestResultInfo', ANALYSIS_TEST_RESULT_INFO],
  ['AnalysisFailureInfo', ANALYSIS_FAILURE_INFO],
]);

/** `coverage_common.instrumented_files_info(ctx, ...)`: accepted; Kiln collects no coverage, so it carries nothing. */
export const coverageCommonModule = new StarModule(
  'coverage_common',
  new Map([
    [
      'instrumented_files_info',
      new Builtin('instrumented_files_info', (_t, args, kwargs) => {
        unpackArgs('instrumented_files_info', args, kwargs, [
          'ctx',
          'source_attributes?',
          'dependency_attributes?',
          'extensions?',
          'metadata_files?',
          'baseline_coverage_files?',
        ]);
        return INSTRUMENTED_FILES_INFO.instantiate([], []);
      }),
    ],
  ]),
);
