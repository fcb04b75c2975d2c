import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { codeStamp, formatPosition, KilnError, nodeCrypto, readTextUpTo, type Position } from '../core/index.js';
import { CycleError, Evaluator, FileStore, SkyFamily, skyFunction, type Environment } from '../skyframe/index.js';
import {
  EvalError,
  execResolvedFile,
  isUniversal,
  parseFile,
  walk,
  resolveFile,
  StarlarkError,
  StarlarkStaticErrors,
  StarlarkSyntaxError,
  Thread,
  type ModuleGlobals,
  type Value,
} from '../starlark/index.js';
import type * as ast from '../starlark/index.js';
import { BUILTIN_REPOSITORIES } from './builtin-repos.js';
import { BUILDER_KEY, nativeModule, packageFunctions } from './build-builtins.js';
import { StarlarkRuleFunction } from './bzl-builtins.js';
import { bzlLoadAllowed, bzlNotVisibleMessage, PUBLIC_BZL, startBzlInit, type BzlVisibility } from './bzl-visibility.js';
import type { BzlModule } from './bzl-module.js';
import { InputStampCache } from './input-stamp-cache.js';
import { exportGlobals } from './export-globals.js';
import { buildPredeclared, bzlPredeclared } from './predeclared.js';
import { Provider } from './provider.js';
import { Label, type PackageContext } from './label.js';
import { packageId, type Package, type PackageError } from './package.js';
import { decodePackage, encodePackage } from './package-codec.js';
import { PackageBuilder, PackageEvaluationStopped } from './package-builder.js';
import { BUILD_SETTING_RULE_CLASSES, NATIVE_RULE_CLASSES } from './rules/native-rules.js';
import { labelBuiltin } from './starlark-label.js';
import { runningStatement, TopLevelStatements } from './top-level-statement.js';
import { readLocalRepositories, Workspace } from './workspace.js';

/** `no such package` (Bazel's wording). */
export class NoSuchPackageError extends KilnError {}

/** Cached packages are valid only for the Kiln build that wrote them (see codeStamp). */
const CACHE_VERSION = `kiln-packages-3:${codeStamp(import.meta.url)}`;

/** The JSON caches earlier builds kept in `<output base>/loading`, removed so they do not linger. */
const LEGACY_CACHE_FILES = ['packages.json', 'input-stamps.json'];

export interface PackageLoaderOptions {
  readonly workspace: Workspace;
  /**
   * The workspace's output base (the caller chooses it, for every command alike): holds the package
   * cache and the external repositories.
   */
  readonly outputBase: string;
  /** Keep package results between runs (default true). */
  readonly persistent?: boolean;
  /** `print()` output and warnings, already positioned. */
  readonly onEvent?: (kind: 'DEBUG' | 'WARNING', message: string) => void;
}

/** One-shot hashing: a cold load hashes every BUILD file and listing, and a Hash object each cost more. */
function hashText(text: string): string {
  return nodeCrypto().hash('sha1', text, 'base64');
}

/**
 * The most bytes Kiln reads from one BUILD or .bzl file: 32 MiB. The largest real BUILD files
 * (generated ones included) are a few MB, and 10 MB files load (test/e2e/large-build-files);
 * a 100 MB file of 3.3 million targets ended in a V8 fatal error instead of a message.
 */
export const MAX_SOURCE_BYTES = 32 << 20;

/** What readText returns for a file past MAX_SOURCE_BYTES. */
const TOO_LARGE = Symbol('too large');

/** A source file's text; undefined when it cannot be read; TOO_LARGE past MAX_SOURCE_BYTES. */
function readText(path: string): string | undefined | typeof TOO_LARGE {
  try {
    return readTextUpTo(path, MAX_SOURCE_BYTES) ?? TOO_LARGE;
  } catch {
    return undefined;
  }
}

function tooLargeMessage(displayPath: string): string {
  return `${displayPath} is larger than ${MAX_SOURCE_BYTES >> 20} MiB, the most Kiln reads from a BUILD or .bzl file`;
}

/** The fingerprint of what readText read. */
function textFingerprint(text: string | undefined | typeof TOO_LARGE): string {
  return text === undefined ? '!' : text === TOO_LARGE ? '!too large' : hashText(text);
}

/** A package, by repository and path in it. */
interface PackageIdentifier {
  readonly repo: string;
  readonly pkg: string;
}

/** A package loaded in a run: where its BUILD file is (as an input id) and its value's fingerprint. */
export interface PackageRecord {
  readonly repo: string;
  readonly pkg: string;
  readonly buildFile: string;
  readonly fingerprint: string;
}

/** Package values: the targets of one BUILD file, persisted in the package cache. */
const PACKAGE = new SkyFamily<PackageIdentifier, Package>('package', {
  encode: ({ repo, pkg }) => packageId(repo, pkg),
  decode: (id) => {
    const label = Label.parse(`${id}:x`);
    return { repo: label.repo, pkg: label.pkg };
  },
});

/** Evaluated .bzl (and .scl) modules, by label; kept for one run. */
const BZL_MODULE = new SkyFamily<Label, ModuleGlobals>('bzl', { encode: (label) => label.toString(), decode: (text) => Label.parse(text) });

/**
 * Loads packages: evaluates BUILD files and the .bzl files they load through Skyframe, each at
 * most once per run, and keeps package results in the output base keyed by the content of their
 * inputs (BUILD file, loaded .bzl files, directory listings read by globs and package lookups).
 */
export class PackageLoader {
  readonly workspace: Workspace;
  readonly outputBase: string;
  private readonly evaluator: Evaluator;
  private readonly store: FileStore | undefined;
  /** Fingerprints of inputs by their stat(2) stamps: a cached run stats its inputs instead of reading them. */
  private readonly stamps: InputStampCache;
  private readonly repos = new Map<string, Workspace>();
  private localRepositories: Map<string, string> | undefined;
  private readonly oracleCache = new Map<string, string>();
  private readonly loadedPackages = new Map<string, PackageIdentifier>();
  private readonly buildPredeclared: Map<string, Value>;
  private readonly nativeFunctions: Map<string, Value>;
  /** Starlark rules of the .bzl files evaluated in this run, by `//pkg:defs.bzl%name`. */
  private readonly starlarkRules = new Map<string, StarlarkRuleFunction>();
  /** Every .bzl module evaluated in this run, by label and by display path. */
  private readonly bzlModules = new Map<string, BzlModule>();
  private readonly bzlModulesByPath = new Map<string, BzlModule>();
  /** Providers exported by the .bzl files evaluated in this run, by `//pkg:defs.bzl%Name`. */
  private readonly starlarkProviders = new Map<string, Provider>();
  /** The load visibility each .bzl evaluated in this run declared, by label. */
  private readonly bzlVisibility = new Map<string, BzlVisibility>();

  constructor(private readonly options: PackageLoaderOptions) {
    this.workspace = options.workspace;
    this.outputBase = options.outputBase;
    this.workspace.excludeDirectory(this.outputBase);
    const ruleClasses = [...NATIVE_RULE_CLASSES.values(), ...BUILD_SETTING_RULE_CLASSES.values()];
    this.nativeFunctions = packageFunctions(ruleClasses);
    this.buildPredeclared = buildPredeclared(this.nativeFunctions);
    this.nativeFunctions.set('package_group', this.nativeFunctions.get('package_group')!);
    const functions = [
      skyFunction(PACKAGE, { compute: (id, env) => this.computePackage(id, env), persist: { encode: encodePackage, decode: decodePackage } }),
      skyFunction(BZL_MODULE, { compute: (label, env) => this.computeBzl(label, env) }),
    ];
    this.store = options.persistent === false ? undefined : new FileStore(join(this.outputBase, 'loading', 'packages.bin'), CACHE_VERSION);
    this.stamps = new InputStampCache(options.persistent === false ? undefined : join(this.outputBase, 'loading', 'input-stamps.bin'));
    this.evaluator = new Evaluator(functions, this.store, (id) => this.checkInput(id));
  }

  get stats() {
    return this.evaluator.stats;
  }

  /** The workspace of a repository: '' (or the main repository's own name) is the main one. */
  repository(repo: string): Workspace {
    if (repo === '' || repo === this.workspace.name) return this.workspace;
    let ws = this.repos.get(repo);
    if (!ws) {
      // A repository the workspace declares itself wins over a built-in one.
      this.localRepositories ??= readLocalRepositories(this.workspace.root);
      const local = this.localRepositories.get(repo);
      if (local !== undefined) {
        ws = new Workspace(local, repo, this.workspace.lister);
        this.repos.set(repo, ws);
        return ws;
      }
      const files = BUILTIN_REPOSITORIES.get(repo);
      if (!files) throw new NoSuchPackageError(`No repository visible as '@${repo}' from main repository`);
      const root = join(this.outputBase, 'external', repo);
      for (const [path, content] of Object.entries(files)) {
        const full = join(root, path);
        if (readText(full) !== content) {
          mkdirSync(dirname(full), { recursive: true });
          writeFileSync(full, content);
        }
      }
      ws = new Workspace(root, repo, this.workspace.lister);
      this.repos.set(repo, ws);
    }
    return ws;
  }

  /** Display path of a file in a repository (workspace-relative for the main one). */
  displayPath(repo: string, path: string): string {
    return repo === '' || repo === this.workspace.name ? path : `external/${repo}/${path}`;
  }

  /** Loads one package. A package with errors is returned with its errors (as Bazel keeps them). */
  loadPackage(repo: string, pkg: string): Package {
    const key = PACKAGE.key({ repo, pkg });
    this.loadedPackages.set(key.id, key.argument);
    this.packageObserver?.(repo, pkg);
    return this.evaluator.evaluate(key);
  }

  /**
   * Told of every package a caller asks for: analysis records what each configured target read
   * (genquery loads its scope's packages through the loader itself).
   */
  packageObserver: ((repo: string, pkg: string) => void) | undefined;

  /**
   * The fingerprint of a package's value (of its stored encoding), loading the package: equal
   * fingerprints, equal packages, whatever else changed in its files (a comment). `!` for a package
   * that does not load, or that this loader does not store.
   */
  packageFingerprint(repo: string, pkg: string): string {
    return this.evaluator.fingerprintOf(PACKAGE.key({ repo, pkg })) ?? '!';
  }

  /**
   * What a .bzl module read, with the modules it loads (files and listings, as `inputsUnchanged`
   * checks them), evaluating it when this run has not: what depends on its rules and providers.
   */
  bzlInputs(label: string): ReadonlyMap<string, string> {
    const key = BZL_MODULE.key(Label.parse(label));
    try {
      this.evaluator.evaluate(key);
    } catch {
      // A module that fails still read its files; a dependent that got this far records them.
    }
    return this.evaluator.inputsOf(key) ?? new Map();
  }

  /** An input's fingerprint now: the ids `trackInputs` and `bzlInputs` report. */
  inputFingerprint(id: string): string {
    return this.fingerprintNow(id);
  }

  /**
   * The Starlark rule a target's class names (`//pkg:defs.bzl%name`), evaluating its .bzl file when
   * this run has not (the package may have come from the package cache).
   */
  starlarkRule(key: string): StarlarkRuleFunction | undefined {
    let rule = this.starlarkRules.get(key);
    if (!rule) {
      this.evaluator.evaluate(BZL_MODULE.key(Label.parse(key.slice(0, key.lastIndexOf('%')))));
      rule = this.starlarkRules.get(key);
    }
    return rule;
  }

  /**
   * A .bzl or .scl module with all its globals and its syntax tree, evaluating it when this run has
   * not (documentation extraction reads what evaluation made). Evaluation errors are thrown.
   */
  bzlModule(label: string): BzlModule {
    let module = this.bzlModules.get(label);
    if (!module) {
      this.evaluator.evaluate(BZL_MODULE.key(Label.parse(label)));
      module = this.bzlModules.get(label)!;
    }
    return module;
  }

  /** The evaluated module whose file has this display path (a function's defining module), if any. */
  bzlModuleAt(displayPath: string): BzlModule | undefined {
    return this.bzlModulesByPath.get(displayPath);
  }

  /** The provider exported as `//pkg:defs.bzl%Name`, evaluating the .bzl when this run has not. */
  starlarkProvider(key: string): Provider | undefined {
    if (!this.starlarkProviders.has(key)) this.evaluator.evaluate(BZL_MODULE.key(Label.parse(key.slice(0, key.lastIndexOf('%')))));
    return this.starlarkProviders.get(key);
  }

  /**
   * The files a package's evaluation read: its BUILD file and every .bzl file it loaded, transitively
   * (absolute paths). Loads the package first; a missing package throws NoSuchPackageError.
   */
  filesReadBy(repo: string, pkg: string): string[] {
    this.loadPackage(repo, pkg);
    const inputs = this.evaluator.inputsOf(PACKAGE.key({ repo, pkg })) ?? new Map<string, string>();
    return [...inputs].filter(([id, fp]) => id.startsWith('file:') && fp !== '!').map(([id]) => id.slice(5));
  }

  /** Packages this loader has loaded (evaluated or taken from the package cache): Bazel's "packages loaded". */
  get packagesLoaded(): number {
    return this.loadedPackages.size;
  }

  /**
   * Runs `fn` (pattern expansion, analysis: anything that reads packages) and returns, with its
   * result, every input it depended on: the inputs of each package it loaded (BUILD and .bzl files,
   * directory listings of globs) and each directory it listed itself (a `//...` walk, package
   * lookups). A result derived from those alone stays valid while `inputsUnchanged` says so.
   */
  trackInputs<T>(fn: () => T): { value: T; inputs: Map<string, string> } {
    const lister = this.workspace.lister;
    const dirs = new Set<string>();
    const previousObserver = lister.observer;
    lister.observer = (d) => void dirs.add(d);
    try {
      const tracked = this.evaluator.trackInputs(fn);
      for (const d of dirs) tracked.inputs.set(`dir:${d}`, this.fingerprintNow(`dir:${d}`));
      return tracked;
    } finally {
      lister.observer = previousObserver;
    }
  }

  /**
   * The packages loaded in this run, each with the input id of its BUILD file and its value's
   * fingerprint: what `inputsEquivalent` needs to see through an edit that changes no package.
   */
  loadedPackageRecords(): PackageRecord[] {
    const records: PackageRecord[] = [];
    for (const { repo, pkg } of this.loadedPackages.values()) {
      const ws = this.repository(repo);
      const buildName = ws.buildFileOf(pkg);
      if (buildName === undefined) continue;
      records.push({
        repo,
        pkg,
        buildFile: `file:${join(ws.root, pkg === '' ? buildName : `${pkg}/${buildName}`)}`,
        fingerprint: this.packageFingerprint(repo, pkg),
      });
    }
    return records;
  }

  /**
   * Whether a result derived from `inputs` still holds: every input is unchanged, or the only ones
   * that changed are BUILD files of `packages` whose values came out equal (a comment that moves no
   * target). Loads those packages to tell.
   */
  inputsEquivalent(inputs: Iterable<readonly [string, string]>, packages: readonly PackageRecord[]): boolean {
    let byBuildFile: Map<string, PackageRecord> | undefined;
    const affected = new Set<PackageRecord>();
    for (const [id, fp] of inputs) {
      if (this.fingerprintNow(id) === fp) continue;
      byBuildFile ??= new Map(packages.map((p) => [p.buildFile, p]));
      const record = byBuildFile.get(id);
      if (!record) return false;
      affected.add(record);
    }
    for (const p of affected) if (this.packageFingerprint(p.repo, p.pkg) !== p.fingerprint) return false;
    return true;
  }

  /** The inputs' fingerprints now (after `inputsEquivalent` accepted them). */
  refreshed(inputs: Iterable<readonly [string, string]>): [string, string][] {
    return [...inputs].map(([id]) => [id, this.fingerprintNow(id)]);
  }

  /** Whether every input (as trackInputs returned them) still has the same fingerprint. */
  inputsUnchanged(inputs: Iterable<readonly [string, string]>): boolean {
    for (const [id, fp] of inputs) if (this.fingerprintNow(id) !== fp) return false;
    return true;
  }

  /** Writes the package cache. */
  flush(): void {
    this.store?.flush();
    this.stamps.flush();
    if (this.store) for (const name of LEGACY_CACHE_FILES) rmSync(join(this.outputBase, 'loading', name), { force: true });
  }

  /**
   * An input's fingerprint when checking a cached package: a directory this run has already listed (a
   * `//...` walk lists every package directory) is hashed from that listing, which costs less than its
   * stat. Recording inputs goes through fingerprintNow, which also keeps the directory's stamp.
   */
  private checkInput(id: string): string {
    if (!this.oracleCache.has(id) && id.startsWith('dir:')) {
      const listed = this.workspace.lister.fingerprintIfListed(id.slice(4));
      if (listed !== undefined) {
        const fp = hashText(listed);
        this.oracleCache.set(id, fp);
        return fp;
      }
    }
    return this.fingerprintNow(id);
  }

  private fingerprintNow(id: string): string {
    let fp = this.oracleCache.get(id);
    if (fp === undefined) {
      const colon = id.indexOf(':');
      const kind = id.slice(0, colon);
      const path = id.slice(colon + 1);
      const lister = this.workspace.lister;
      fp =
        kind === 'file'
          ? this.stamps.fingerprint(id, path, () => {
              const text = readText(path);
              return { fingerprint: textFingerprint(text), stampable: text !== undefined };
            })
          : this.stamps.fingerprint(id, path, () => ({ fingerprint: hashText(lister.fingerprint(path)), stampable: lister.isStampable(path) }));
      this.oracleCache.set(id, fp);
    }
    return fp;
  }

  private recordFile(env: Environment, path: string, text: string | undefined | typeof TOO_LARGE): void {
    const fp = textFingerprint(text);
    this.oracleCache.set(`file:${path}`, fp);
    env.recordInput(`file:${path}`, fp);
  }

  private computePackage({ repo, pkg }: PackageIdentifier, env: Environment): Package {
    const ws = this.repository(repo);
    const dirs = new Set<string>();
    const lister = ws.lister;
    const previousObserver = lister.observer;
    lister.observer = (d) => void dirs.add(d);
    try {
      return this.evaluatePackage(ws, repo, pkg, env);
    } finally {
      lister.observer = previousObserver;
      for (const d of dirs) env.recordInput(`dir:${d}`, this.fingerprintNow(`dir:${d}`));
    }
  }

  private evaluatePackage(ws: Workspace, repo: string, pkg: string, env: Environment): Package {
    const buildName = ws.buildFileOf(pkg);
    if (buildName === undefined) {
      throw new NoSuchPackageError(
        `no such package '${repo === '' ? '' : `@${repo}//`}${pkg}': BUILD file not found in any of the following directories. Add a BUILD file to a directory to mark it as a package.\n - ${this.displayPath(repo, pkg)}`,
      );
    }
    const relPath = pkg === '' ? buildName : `${pkg}/${buildName}`;
    const absPath = join(ws.root, relPath);
    const text = readText(absPath);
    this.recordFile(env, absPath, text);
    const displayPath = this.displayPath(repo, relPath);
    const source = typeof text === 'string' ? text : '';
    const builder = new PackageBuilder(ws, repo, pkg, displayPath);
    const errors: PackageError[] = [];
    const context: PackageContext = { repo, pkg };
    let parsed: ast.File | undefined;
    const thread = new Thread(`BUILD ${packageId(repo, pkg)}`, {
      load: (_t, module) => this.loadModule(module, context, env, parsed),
      print: (t, msg) => this.options.onEvent?.('DEBUG', `${formatPos(runningStatement(t)?.pos, displayPath)}: ${msg}`),
    });
    thread.locals.set(BUILDER_KEY, builder);
    const predeclared = new Map(this.buildPredeclared);
    predeclared.set('Label', labelBuiltin(context));
    try {
      if (text === TOO_LARGE) {
        errors.push({ message: tooLargeMessage(displayPath), pos: { file: displayPath, line: 1, col: 1 } });
        throw new PackageEvaluationStopped();
      }
      const file = parseFile(source, displayPath);
      parsed = file;
      const restricted = buildDialectErrors(file);
      if (restricted.length > 0) {
        for (const e of restricted) errors.push(e);
        throw new PackageEvaluationStopped();
      }
      new TopLevelStatements(file).attachTo(thread);
      resolveFile(file, thread.options, (n) => predeclared.has(n), isUniversal);
      execResolvedFile(thread, file, predeclared);
    } catch (e) {
      if (!(e instanceof PackageEvaluationStopped)) for (const x of starlarkErrors(e)) errors.push(x);
    }
    builder.finish();
    for (const e of builder.errors) errors.push({ message: e.message, ...(e.pos ? { pos: e.pos } : {}) });
    return { repo, pkg, buildFile: displayPath, targets: builder.targets, errors, defaults: builder.defaults };
  }

  /** The load() hook: resolves the module label against the loading file's package (`file`, the loading file's syntax). */
  private loadModule(module: string, from: PackageContext, env: Environment, file: ast.File | undefined): ModuleGlobals {
    let label: Label;
    try {
      label = Label.parse(module, from);
    } catch (e) {
      throw new StarlarkError((e as Error).message, { cause: e });
    }
    if (!label.name.endsWith('.bzl') && !label.name.endsWith('.scl')) {
      throw new StarlarkError("The label must reference a file with extension '.bzl'");
    }
    let globals: ModuleGlobals;
    try {
      globals = env.get(BZL_MODULE.key(label));
    } catch (e) {
      if (e instanceof CycleError) {
        throw new StarlarkError(`cycle detected in extension files: ${e.path.map((k) => String(k.argument)).join(' -> ')}`, { cause: e });
      }
      throw e;
    }
    // Load visibility (Bazel's BzlLoadFunction): the loaded file's `visibility()` against the loading file's package.
    if (!bzlLoadAllowed(this.bzlVisibility.get(label.toString()) ?? PUBLIC_BZL, label, from)) {
      // Bazel's message as it is, at the load statement (not as a failure to load the module).
      const load = file?.stmts.find((st): st is ast.LoadStmt => st.kind === 'LoadStmt' && st.module.value === module);
      if (!load) throw new StarlarkError(bzlNotVisibleMessage(label, from));
      throw new EvalError(bzlNotVisibleMessage(label, from), load.module.pos, [{ name: '<toplevel>', pos: load.module.pos }]);
    }
    return globals;
  }

  private computeBzl(label: Label, env: Environment): ModuleGlobals {
    let ws: Workspace;
    try {
      ws = this.repository(label.repo);
    } catch (e) {
      throw new StarlarkError((e as Error).message, { cause: e });
    }
    const relPath = label.pkg === '' ? label.name : `${label.pkg}/${label.name}`;
    const absPath = join(ws.root, relPath);
    const dirs = new Set<string>();
    const previousObserver = ws.lister.observer;
    ws.lister.observer = (d) => void dirs.add(d);
    let crossing: string | null;
    let isPackage: boolean;
    try {
      isPackage = ws.isPackage(label.pkg);
      crossing = ws.subpackageCrossing(label);
    } finally {
      ws.lister.observer = previousObserver;
      for (const d of dirs) env.recordInput(`dir:${d}`, this.fingerprintNow(`dir:${d}`));
    }
    if (!isPackage) {
      throw new StarlarkError(
        `Unable to find package for ${label}: BUILD file not found in any of the following directories. Add a BUILD file to a directory to mark it as a package.\n - ${this.displayPath(label.repo, label.pkg)}`,
      );
    }
    if (crossing) throw new StarlarkError(crossing);
    const source = readText(absPath);
    this.recordFile(env, absPath, source);
    if (source === undefined) throw new StarlarkError(`no such file '${this.displayPath(label.repo, relPath)}'`);
    if (source === TOO_LARGE) throw new StarlarkError(tooLargeMessage(this.displayPath(label.repo, relPath)));
    const context: PackageContext = { repo: label.repo, pkg: label.pkg };
    let parsed: ast.File | undefined;
    const thread = new Thread(`load ${label}`, {
      load: (_t, module) => this.loadModule(module, context, env, parsed),
      print: (t, msg) => this.options.onEvent?.('DEBUG', `${formatPos(t.callSyntax(0)?.pos, this.displayPath(label.repo, relPath))}: ${msg}`),
    });
    const predeclared = bzlPredeclared(context, label.toString(), nativeModule(this.nativeFunctions));
    const init = startBzlInit(thread, label.repo);
    const file = parseFile(source, this.displayPath(label.repo, relPath));
    parsed = file;
    resolveFile(file, thread.options, (n) => predeclared.has(n), isUniversal);
    const globals = execResolvedFile(
      thread,
      file,
      predeclared,
      label.repo === '' || label.repo === this.workspace.name ? label.toString().replace(/^@[^/]*/, '') : label.toString(),
    );
    this.bzlVisibility.set(label.toString(), init.visibility());
    exportGlobals(globals, label.toString());
    const module: BzlModule = { label: label.toString(), displayPath: file.path, source, file, globals };
    this.bzlModules.set(module.label, module);
    this.bzlModulesByPath.set(module.displayPath, module);
    for (const v of globals.values()) {
      if (v instanceof StarlarkRuleFunction && v.ruleClass) this.starlarkRules.set(v.ruleClass.starlark!.key, v);
      else if (v instanceof Provider && v.key.startsWith(`${label}%`)) this.starlarkProviders.set(v.key, v);
    }
    const exported = new Map<string, Value>();
    for (const [k, v] of globals) if (!k.startsWith('_')) exported.set(k, v);
    return exported;
  }
}

function formatPos(pos: Position | undefined, file: string): string {
  return pos ? formatPosition(pos) : file;
}

/** Every error a Starlark phase threw, positioned. */
function starlarkErrors(e: unknown): PackageError[] {
  if (e instanceof StarlarkStaticErrors) return e.errors.map((x: KilnError) => ({ message: x.message, ...(x.pos ? { pos: x.pos } : {}) }));
  if (e instanceof StarlarkSyntaxError || e instanceof EvalError || e instanceof KilnError) return [{ message: e.message, ...(e.pos ? { pos: e.pos } : {}) }];
  throw e;
}

/** BUILD files are Starlark without `def` and without `*args` / `**kwargs` in calls (Bazel's wording). */
function buildDialectErrors(file: ast.File): PackageError[] {
  const out: PackageError[] = [];
  // Wording and positions as Bazel 2.1.0 reports them (a star argument at its call).
  const callOf = new Map<ast.Argument, ast.CallExpr>();
  walk(file, (n) => {
    if (n.kind === 'DefStmt') {
      out.push({ message: 'function definitions are not allowed in BUILD files. You may move the function to a .bzl file and load it.', pos: n.pos });
    } else if (n.kind === 'CallExpr') {
      for (const a of n.args) callOf.set(a, n);
    } else if (n.kind === 'Argument' && (n.mode === 'star' || n.mode === 'starstar')) {
      const what = n.mode === 'star' ? '*args' : '**kwargs';
      out.push({ message: `${what} arguments are not allowed in BUILD files. Pass the arguments in explicitly.`, pos: callOf.get(n)!.pos });
    }
  });
  return out;
}
