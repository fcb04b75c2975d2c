import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { Action, Artifact, DerivedArtifact } from '../../actions/index.js';
import { execPropertiesOf, executionRequirementsFromTags } from '../../actions/index.js';
import type { CcInfo, ConfiguredTarget, FileEntry } from '../configured/configured-target.js';
import type { RuleContext } from '../configured/rule-context.js';
import { Label } from '../../loading/index.js';
import { targetNameOf } from '../configured/target-paths.js';
import { uniqueFiles, type RuleResult } from './rule-result.js';
import { runEnvironmentOf } from './run-environment.js';
import { configurationMakeVariables } from '../expansion/configuration-make-variables.js';
import { ExpansionFailure } from '../expansion/location-expander.js';
import { expandMakeVariables } from '../expansion/make-variable-expander.js';
import { tokenize } from '../expansion/run-arguments.js';

/**
 * cc_library, cc_binary and cc_test, built as Bazel's auto-configured Unix toolchain builds them:
 * one `CppCompile` action per source (`_objs/<name>/<src>.o`), a `CppArchive` of a library's objects
 * (`lib<name>.a`), a `CppLink` of a binary's objects with its dependencies' archives. Headers travel
 * as CcInfo (headers, include roots, defines, archives, linkopts), transitively.
 */

const C_SOURCE = /\.c$/;
const CXX_SOURCE = /\.(cc|cpp|cxx|c\+\+|C|cu|cl)$/;
const ASSEMBLY = /\.(s|S|asm)$/;
const HEADER = /\.(h|hh|hpp|ipp|hxx|h\+\+|inc|inl|tlh|tli|H|tcc)$/;
const ARCHIVE = /\.(a|lo|pic\.a|o|pic\.o)$/;

/** Bazel's unix_cc_toolchain_config flags for fastbuild (compile) and for every link. */
const COMPILE_FLAGS = ['-U_FORTIFY_SOURCE', '-fstack-protector', '-Wall', '-Wunused-but-set-parameter', '-Wno-free-nonheap-object', '-fno-omit-frame-pointer'];
const CXX_FLAGS = ['-std=c++0x'];
const LINK_FLAGS = ['-Wl,-no-as-needed', '-Wl,-z,relro,-z,now', '-pass-exit-codes'];
const LINK_LIBS = ['-lstdc++', '-lm'];

/** Attributes of Bazel's C++ rules Kiln does not honour: set, they fail the target rather than be ignored. */
const UNSUPPORTED_ATTRIBUTES = ['include_prefix', 'strip_include_prefix', 'dynamic_deps', 'win_def_file', 'linkshared'];

let hostCompiler: string | undefined;

/**
 * A list of options (`copts`, `defines`, `linkopts`...) as Bazel reads it: each entry Make-variable
 * expanded, then split into words as a Bourne shell would.
 */
function optionList(ctx: RuleContext, attribute: string): string[] {
  const variables = configurationMakeVariables(ctx.config);
  try {
    return ctx.attr<readonly string[]>(attribute, []).flatMap((entry) => tokenize(expandMakeVariables(entry, (n) => variables.get(n))));
  } catch (e) {
    if (e instanceof ExpansionFailure) throw ctx.error(attribute, e.message);
    throw e;
  }
}

/**
 * The C compiler driver, found as Bazel's cc_configure finds it: `$CC`, else `gcc` (then `cc`,
 * `clang`) on PATH, as an absolute path so actions do not depend on their own PATH.
 */
function cCompiler(ctx: RuleContext): string {
  if (hostCompiler !== undefined) return hostCompiler;
  const fromEnv = process.env['CC'];
  const candidates = fromEnv ? [fromEnv] : ['gcc', 'cc', 'clang'];
  for (const name of candidates) {
    if (name.includes('/')) {
      if (existsSync(name)) return (hostCompiler = name);
      continue;
    }
    for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
      if (dir !== '' && existsSync(join(dir, name))) return (hostCompiler = join(dir, name));
    }
  }
  throw ctx.error(undefined, `Auto-Configuration Error: Cannot find gcc or CC (${fromEnv ?? 'gcc, cc, clang'}); set CC or install a C compiler`);
}

const EMPTY_CC: CcInfo = { headers: [], quoteIncludes: [], systemIncludes: [], defines: [], libraries: [], linkopts: [] };

/** CcInfo of a dependency: a C++ rule's own, else its files sorted into headers and libraries (a filegroup of .h or .a). */
function ccInfoOf(dep: ConfiguredTarget): CcInfo {
  if (dep.cc) return dep.cc;
  const headers = dep.files.filter((f) => HEADER.test(f.artifact.execPath)).map((f) => f.artifact);
  const libraries = dep.files.filter((f) => ARCHIVE.test(f.artifact.execPath)).map((f) => f.artifact);
  return headers.length === 0 && libraries.length === 0 ? EMPTY_CC : { ...EMPTY_CC, headers, libraries };
}

function merged(infos: readonly CcInfo[]): CcInfo {
  const unique = <T>(xs: Iterable<T>, key: (x: T) => string) => {
    const seen = new Set<string>();
    return [...xs].filter((x) => (seen.has(key(x)) ? false : (seen.add(key(x)), true)));
  };
  const byPath = (a: Artifact) => a.execPath;
  return {
    headers: unique(
      infos.flatMap((i) => i.headers),
      byPath,
    ),
    quoteIncludes: unique(
      infos.flatMap((i) => i.quoteIncludes),
      String,
    ),
    systemIncludes: unique(
      infos.flatMap((i) => i.systemIncludes),
      String,
    ),
    defines: unique(
      infos.flatMap((i) => i.defines),
      String,
    ),
    libraries: unique(
      infos.flatMap((i) => i.libraries),
      byPath,
    ),
    linkopts: infos.flatMap((i) => i.linkopts),
  };
}

interface Compiled {
  readonly objects: readonly DerivedArtifact[];
  readonly actions: readonly Action[];
  readonly cc: CcInfo;
}

/** The repository part of the include roots: `.` for the main repository, `external/<repo>` for others. */
function repositoryRoot(label: Label): string {
  return label.repo === '' ? '.' : `external/${label.repo}`;
}

function compile(ctx: RuleContext, pic: boolean, exportsHeaders: boolean): Compiled {
  const { target } = ctx;
  for (const a of UNSUPPORTED_ATTRIBUTES) {
    const v = ctx.attr<unknown>(a, undefined, a !== 'linkshared');
    if (v !== undefined && v !== '' && v !== false && !(Array.isArray(v) && v.length === 0) && v !== null) {
      throw ctx.error(a, `the '${a}' attribute of ${target.ruleClass} is not supported by Kiln`);
    }
  }
  const deps = [...ctx.deps('deps'), ...(target.ruleClass === 'cc_library' ? ctx.deps('implementation_deps') : [])];
  const srcFiles = uniqueFiles(ctx.deps('srcs').flatMap((d) => d.files));
  const hdrFiles = target.ruleClass === 'cc_library' ? uniqueFiles([...ctx.deps('hdrs'), ...ctx.deps('textual_hdrs')].flatMap((d) => d.files)) : [];
  const extraInputs = ctx.deps('additional_compiler_inputs').flatMap((d) => d.files.map((f) => f.artifact));
  const depInfo = merged(deps.map(ccInfoOf));

  const label = Label.parse(target.label);
  const pkg = label.pkg;
  const repo = repositoryRoot(label);
  const bin = ctx.config.outputDirectories.bin;
  const quoteIncludes = [repo, repo === '.' ? bin : `${bin}/${repo}`];
  const systemIncludes = ctx.attr<readonly string[]>('includes', []).flatMap((dir) => {
    const path = [repo === '.' ? '' : repo, pkg, dir].filter((p) => p !== '' && p !== '.').join('/') || '.';
    return [path, `${bin}/${path}`];
  });
  const defines = optionList(ctx, 'defines');
  const own: CcInfo = {
    headers: [...hdrFiles, ...srcFiles.filter((f) => HEADER.test(f.artifact.execPath))].map((f) => f.artifact),
    quoteIncludes,
    systemIncludes,
    defines,
    libraries: srcFiles.filter((f) => ARCHIVE.test(f.artifact.execPath)).map((f) => f.artifact),
    linkopts: [],
  };
  const visible = merged([own, depInfo]);

  const compiler = cCompiler(ctx);
  const copts = optionList(ctx, 'copts');
  const conlyopts = optionList(ctx, 'conlyopts');
  const cxxopts = optionList(ctx, 'cxxopts');
  const localDefines = optionList(ctx, 'local_defines');
  const name = targetNameOf(target.label);
  const tags = ctx.attr<readonly string[]>('tags', [], false);
  const objects: DerivedArtifact[] = [];
  const actions: Action[] = [];
  for (const src of srcFiles) {
    const path = src.artifact.execPath;
    const isC = C_SOURCE.test(path);
    if (!isC && !CXX_SOURCE.test(path) && !ASSEMBLY.test(path)) continue;
    const base = (src.label ? targetNameOf(src.label) : path.slice(path.lastIndexOf('/') + 1)).replace(/\.[^./]*$/, '');
    const object = ctx.outputFile(`_objs/${name}/${base}${pic ? '.pic' : ''}.o`, true).artifact as DerivedArtifact;
    objects.push(object);
    const argv = [
      compiler,
      ...COMPILE_FLAGS,
      ...(isC ? [] : CXX_FLAGS),
      ...(pic ? ['-fPIC'] : []),
      `-frandom-seed=${object.execPath}`,
      ...visible.defines.map((d) => `-D${d}`),
      ...localDefines.map((d) => `-D${d}`),
      ...visible.quoteIncludes.flatMap((d) => ['-iquote', d]),
      ...visible.systemIncludes.flatMap((d) => ['-isystem', d]),
      ...copts,
      ...(isC ? conlyopts : cxxopts),
      '-c',
      path,
      '-o',
      object.execPath,
    ];
    actions.push({
      owner: target.label,
      location: target.location,
      mnemonic: 'CppCompile',
      progressMessage: `Compiling ${path}`,
      argv,
      env: {},
      inputs: [src.artifact, ...visible.headers, ...extraInputs],
      outputs: [object],
      executionRequirements: executionRequirementsFromTags(tags),
      executableOutputs: false,
      ...execPropertiesOf(ctx.execProperties()),
    });
  }
  const linkopts = optionList(ctx, 'linkopts');
  const exported: CcInfo = exportsHeaders ? { ...merged([own, depInfo]), linkopts: [...linkopts, ...depInfo.linkopts] } : EMPTY_CC;
  return { objects, actions, cc: exported };
}

/** cc_library: its objects archived into `lib<name>.a`; CcInfo with its headers, includes, defines and archive. */
export function analyzeCcLibrary(ctx: RuleContext): RuleResult {
  const { target } = ctx;
  const compiled = compile(ctx, true, true);
  const actions = [...compiled.actions];
  const files: FileEntry[] = [];
  let libraries = compiled.cc.libraries;
  if (compiled.objects.length > 0) {
    const archive = ctx.outputFile(`lib${targetNameOf(target.label)}.a`, true);
    const out = archive.artifact as DerivedArtifact;
    actions.push({
      owner: target.label,
      location: target.location,
      mnemonic: 'CppArchive',
      progressMessage: `Linking ${out.execPath}`,
      argv: ['/usr/bin/ar', 'rcsD', out.execPath, ...compiled.objects.map((o) => o.execPath)],
      env: {},
      inputs: compiled.objects,
      outputs: [out],
      executionRequirements: executionRequirementsFromTags(ctx.attr<readonly string[]>('tags', [], false)),
      executableOutputs: false,
      ...execPropertiesOf(ctx.execProperties()),
    });
    files.push(archive);
    // Its own archive links before those of its dependencies.
    libraries = [out, ...libraries];
  }
  const runfiles = dataRunfiles(ctx, files);
  return { files, runfiles, actions, cc: { ...compiled.cc, libraries } };
}

/** cc_binary and cc_test: the objects linked with the transitive archives into the executable `<name>`. */
export function analyzeCcExecutable(ctx: RuleContext): RuleResult {
  const { target } = ctx;
  const compiled = compile(ctx, false, false);
  const depInfo = merged(ctx.deps('deps').map(ccInfoOf));
  const srcArchives = uniqueFiles(ctx.deps('srcs').flatMap((d) => d.files))
    .filter((f) => ARCHIVE.test(f.artifact.execPath))
    .map((f) => f.artifact);
  const linkerInputs = ctx.deps('additional_linker_inputs').flatMap((d) => d.files.map((f) => f.artifact));
  const exe = ctx.outputFile(targetNameOf(target.label), true);
  const out = exe.artifact as DerivedArtifact;
  const libraries = [...srcArchives, ...depInfo.libraries];
  const link: Action = {
    owner: target.label,
    location: target.location,
    mnemonic: 'CppLink',
    progressMessage: `Linking ${out.execPath}`,
    argv: [
      cCompiler(ctx),
      '-o',
      out.execPath,
      ...compiled.objects.map((o) => o.execPath),
      // Archives once each, the whole group searched again for references between them.
      ...(libraries.length > 0 ? ['-Wl,--start-group', ...libraries.map((l) => l.execPath), '-Wl,--end-group'] : []),
      ...LINK_FLAGS,
      ...optionList(ctx, 'linkopts'),
      ...depInfo.linkopts,
      ...LINK_LIBS,
    ],
    env: {},
    inputs: [...compiled.objects, ...libraries, ...linkerInputs],
    outputs: [out],
    executionRequirements: executionRequirementsFromTags(ctx.attr<readonly string[]>('tags', [], false)),
    executableOutputs: true,
    ...execPropertiesOf(ctx.execProperties()),
  };
  return {
    files: [exe],
    runfiles: dataRunfiles(ctx, [exe]),
    actions: [...compiled.actions, link],
    executable: exe,
    runEnvironment: runEnvironmentOf(ctx, () => true),
  };
}

/** Runfiles: the rule's own files, then the files and runfiles of `data`, then the runfiles of `deps`. */
function dataRunfiles(ctx: RuleContext, own: readonly FileEntry[]): FileEntry[] {
  const data = ctx.deps('data');
  const deps = ctx.deps('deps');
  return uniqueFiles([...own, ...data.flatMap((d) => [...d.files, ...d.runfiles]), ...deps.flatMap((d) => d.runfiles)]);
}
