import type { DerivedArtifact } from '../../actions/index.js';
import { inProcessAction } from '../../actions/index.js';
import type { RuleContext } from '../configured/rule-context.js';
import { targetNameOf } from '../configured/target-paths.js';
import { uniqueFiles, type RuleResult } from './rule-result.js';
import { runEnvironmentOf } from './run-environment.js';

/**
 * sh_library: its files are its srcs; runfiles add the files and runfiles of deps and data
 * (Bazel's ShLibrary: srcs to build, default runfiles of every dependency).
 */
export function analyzeShLibrary(ctx: RuleContext): RuleResult {
  const srcs = ctx.deps('srcs');
  const deps = ctx.deps('deps');
  const data = ctx.deps('data');
  const files = uniqueFiles(srcs.flatMap((d) => d.files));
  const runfiles = uniqueFiles([...files, ...srcs.flatMap((d) => d.runfiles), ...[...deps, ...data].flatMap((d) => [...d.files, ...d.runfiles])]);
  return { files, runfiles };
}

/**
 * sh_binary and sh_test: exactly one src, made available as the executable `<name>` in bin by an
 * in-process copy (Bazel symlinks; a copy is the same file content for execution and remote caches);
 * runfiles as sh_library plus the executable itself.
 */
export function analyzeShExecutable(ctx: RuleContext): RuleResult {
  const library = analyzeShLibrary(ctx);
  const srcFiles = library.files;
  if (srcFiles.length !== 1) throw ctx.error('srcs', "you must specify exactly one file in 'srcs'");
  const name = targetNameOf(ctx.target.label);
  const out = ctx.outputFile(name, true);
  const src = srcFiles[0]!;
  // In-process, as Bazel links it: no process for one file.
  const action = inProcessAction({
    owner: ctx.target.label,
    location: ctx.target.location,
    mnemonic: 'CopyFile',
    progressMessage: `Copying executable ${ctx.target.label}`,
    output: out.artifact as DerivedArtifact,
    inputs: [src.artifact],
    work: { kind: 'symlink', target: src.artifact.execPath },
    executable: true,
  });
  return { files: [out], runfiles: uniqueFiles([out, ...library.runfiles]), actions: [action], runEnvironment: runEnvironmentOf(ctx, () => true) };
}
