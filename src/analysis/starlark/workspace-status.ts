import { inProcessAction, type Action, type DerivedArtifact } from '../../actions/index.js';
import type { FileEntry } from '../configured/configured-target.js';

/** The keys and values of Bazel's workspace status files (`BUILD_EMBED_LABEL`, `BUILD_HOST`, ...). */
export interface WorkspaceStatusValues {
  readonly stable: ReadonlyMap<string, string>;
  readonly volatile: ReadonlyMap<string, string>;
}

/** `ctx.info_file` and `ctx.version_file`, and the one in-process action of the build that writes each. */
export interface WorkspaceStatus {
  readonly stable: FileEntry;
  readonly volatile: FileEntry;
  readonly actions: readonly Action[];
}

const OWNER = '//:workspace_status';

/** `KEY value` lines, sorted by key, as Bazel writes them. */
function statusText(values: ReadonlyMap<string, string>): string {
  return [...values]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k} ${v}\n`)
    .join('');
}

/**
 * Bazel's `bazel-out/stable-status.txt` and `bazel-out/volatile-status.txt` under `outputRoot`
 * (the `bazel-out` directory of the configuration), each written by an in-process action.
 */
export function workspaceStatus(outputRoot: string, values: WorkspaceStatusValues): WorkspaceStatus {
  const file = (name: string, content: string): [FileEntry, Action] => {
    const artifact: DerivedArtifact = { kind: 'derived', execPath: `${outputRoot}/${name}`, root: outputRoot, owner: OWNER };
    const action = inProcessAction({
      owner: OWNER,
      mnemonic: 'BazelWorkspaceStatusAction',
      progressMessage: `Writing file ${name}`,
      output: artifact,
      work: { kind: 'write', content },
    });
    return [{ artifact, rootPath: name }, action];
  };
  const [stable, writeStable] = file('stable-status.txt', statusText(values.stable));
  const [volatile, writeVolatile] = file('volatile-status.txt', statusText(values.volatile));
  return { stable, volatile, actions: [writeStable, writeVolatile] };
}
