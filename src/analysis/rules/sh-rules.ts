import type { Action, DerivedArtifact } from '../../actions/index.js';
import { execPropertiesOf, executionRequirementsFromTags } from '../../actions/index.js';
import type { RunEnvironment } from '../configured/configured-target.js';
import type { RuleContext } from '../configured/rule-context.js';
import { targetNameOf } from '../configured/target-paths.js';
import { configurationMakeVariables } from '../expansion/configuration-make-variables.js';
import { ExpansionFailure, type LocationEntry } from '../expansion/location-expander.js';
import { expandRunArguments, expandRunValue } from '../expansion/run-arguments.js';
import { uniqueFiles, type RuleResult } from './rule-result.js';

/**
 * sh_library: its files are its srcs; runfiles add the files and runfiles of deps and data
 * (Bazel's ShLibrary: srcs to build, default runfiles of every dependency).
 */
export function analyzeShLibrary(ctx: RuleContext): RuleResult {
  const srcs = ctx.deps('srcs');
  const deps = ctx.deps('deps');
  const data = ctx.deps('data');
  const files = uniqueFiles(srcs.flatMap((d) => d.files));
  const runfiles = uniqueFiles([
    ...files,
    ...srcs.flatMap((d) => d.runfiles),
    ...[...deps, ...data].flatMap((d) => [...d.files, ...d.runfiles]),
  ]);
  return { files, runfiles };
}

/**
 * sh_binary and sh_test: exactly one src, made available as the executable `<name>` in bin by a
 * copy action (Bazel symlinks; a copy is the same file content for execution and remote caches);
 * runfiles as sh_library plus the executable itself.
 */
export function analyzeShExecutable(ctx: RuleContext): RuleResult {
  const library = analyzeShLibrary(ctx);
  const srcFiles = library.files;
  if (srcFiles.length !== 1) throw ctx.error('srcs', "you must specify exactly one file in 'srcs'");
  const name = targetNameOf(ctx.target.label);
  const out = ctx.outputFile(name, true);
  const src = srcFiles[0]!;
  const tags = ctx.attr<readonly string[]>('tags', [], false);
  const action: Action = {
    owner: ctx.target.label,
    location: ctx.target.location,
    mnemonic: 'CopyFile',
    progressMessage: `Copying executable ${ctx.target.label}`,
    argv: ['/bin/cp', src.artifact.execPath, out.artifact.execPath],
    env: {},
    inputs: [src.artifact],
    outputs: [out.artifact as DerivedArtifact],
    executionRequirements: executionRequirementsFromTags(tags),
    executableOutputs: true,
    ...execPropertiesOf([...ctx.execConfig.platform.execProperties, ...ctx.attr<readonly (readonly [string, string])[]>('exec_properties', [], true)]),
  };
  return { files: [out], runfiles: uniqueFiles([out, ...library.runfiles]), actions: [action], runEnvironment: runEnvironmentOf(ctx) };
}

/** `args` and `env` with `$(location)` of srcs, deps and data, and Make variables, expanded. */
function runEnvironmentOf(ctx: RuleContext): RunEnvironment {
  const prerequisites = new Map<string, LocationEntry>();
  for (const dep of ['srcs', 'deps', 'data'].flatMap((a) => ctx.deps(a))) {
    prerequisites.set(dep.label, { execPaths: dep.files.map((f) => f.artifact.execPath), rootPaths: dep.files.map((f) => f.rootPath) });
  }
  const locations = { prerequisites, canonicalize: (raw: string) => ctx.canonicalize(raw) };
  const variables = configurationMakeVariables(ctx.config);
  const lookup = (name: string) => variables.get(name);
  const expand = <T>(attribute: string, f: () => T): T => {
    try {
      return f();
    } catch (e) {
      if (e instanceof ExpansionFailure) throw ctx.error(attribute, e.message);
      throw e;
    }
  };
  const args = expand('args', () => expandRunArguments(ctx.attr<readonly string[]>('args', []), locations, lookup));
  const env = expand('env', () => ctx.attr<readonly (readonly [string, string])[]>('env', []).map(([k, v]) => [k, expandRunValue(v, locations, lookup)] as const));
  return { args, env };
}
