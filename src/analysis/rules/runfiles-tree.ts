import type { Action, DerivedArtifact } from '../../actions/index.js';
import type { ConfiguredTarget, FileEntry } from '../configured/configured-target.js';

/** An executable's runfiles tree as Bazel lays it out, and the action that makes it. */
export interface RunfilesTree {
  /** `bazel-out/<config>/bin/pkg/t.runfiles`. */
  readonly dir: string;
  /** Every file of the tree (entries, `MANIFEST`) and `<exe>.runfiles_manifest` beside the executable. */
  readonly files: readonly DerivedArtifact[];
  readonly action: Action;
}

/**
 * The runfiles tree of `executable` at `<exe>.runfiles`: each runfile at `<workspace>/<root path>`
 * (`<repo>/<path>` for another repository's file), plus `MANIFEST` and `<exe>.runfiles_manifest`
 * with one `<runfiles path> <exec path>` line per entry, sorted, as Bazel writes them; with
 * `legacyExternalRunfiles` (`--legacy_external_runfiles`) another repository's files appear also under
 * `<workspace>/external/<repo>/`.
 *
 * The entries are copies made by one in-process action, so the tree is made of declared outputs: it
 * is keyed and cached like any other output and reaches a sandboxed or remote test as ordinary inputs.
 * (Bazel links them to the execroot; its manifest's second column is then an absolute path, here
 * the exec path, which keeps the manifest, and so every test action, the same on every machine.)
 */
export function runfilesTree(
  executable: FileEntry,
  runfiles: readonly FileEntry[],
  workspaceName: string,
  owner: string,
  legacyExternalRunfiles = false,
): RunfilesTree {
  const exe = executable.artifact;
  if (exe.kind !== 'derived') throw new Error(`runfilesTree: ${exe.execPath} is not a derived file`);
  const dir = `${exe.execPath}.runfiles`;
  const derived = (execPath: string, type?: DerivedArtifact['type']): DerivedArtifact => ({
    kind: 'derived',
    execPath,
    root: exe.root,
    owner,
    ...(type ? { type } : {}),
  });
  const entries = new Map<string, FileEntry>();
  for (const f of [executable, ...runfiles]) {
    const path = runfilesPath(f.rootPath, workspaceName);
    if (!entries.has(path)) entries.set(path, f);
    // --legacy_external_runfiles: another repository's file also under `<workspace>/external/`.
    const legacy = `${workspaceName}/external/${f.rootPath.slice(3)}`;
    if (legacyExternalRunfiles && f.rootPath.startsWith('../') && !entries.has(legacy)) entries.set(legacy, f);
  }
  const sorted = [...entries.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const manifest = sorted.map(([path, f]) => `${path} ${f.artifact.execPath}\n`).join('');
  const isTree = (f: FileEntry) => f.artifact.kind === 'derived' && f.artifact.type === 'directory';
  // A directory's entry is a tree artifact of its own, a copy of it.
  const outputs = sorted.map(([path, f]) => derived(`${dir}/${path}`, isTree(f) ? 'directory' : undefined));
  const manifestFile = derived(`${dir}/MANIFEST`);
  const siblingManifest = derived(`${exe.execPath}.runfiles_manifest`);
  const action: Action = {
    owner,
    mnemonic: 'SymlinkTree',
    progressMessage: `Creating runfiles tree ${dir}`,
    argv: [],
    env: {},
    inputs: sorted.map(([, f]) => f.artifact),
    outputs: [...outputs, manifestFile, siblingManifest],
    executionRequirements: [],
    executableOutputs: false,
    // Done in-process, as Bazel makes its runfiles trees: no process for a few copies.
    inProcess: {
      kind: 'copies',
      copies: sorted.map(([path, f]) => [f.artifact.execPath, `${dir}/${path}`] as const),
      writes: [
        [manifestFile.execPath, manifest],
        [siblingManifest.execPath, manifest],
      ],
    },
  };
  return { dir, files: action.outputs, action };
}

/** `pkg/file` → `<workspace>/pkg/file`; `../repo/file` → `repo/file`. */
export function runfilesPath(rootPath: string, workspaceName: string): string {
  return rootPath.startsWith('../') ? rootPath.slice(3) : `${workspaceName}/${rootPath}`;
}

/** The file `kiln run` and `kiln test` start: the rule's executable, else its single output. */
export function programOf(ct: ConfiguredTarget): FileEntry | undefined {
  return ct.executable ?? (ct.files.length === 1 ? ct.files[0] : undefined);
}
