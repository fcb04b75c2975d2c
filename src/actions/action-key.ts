import { digestOf, durationFromMs, encodeAction, encodeCommand, encodedBytes, type Digest, type EncodedMessage, type PlatformFields } from '../core/index.js';
import type { Action } from './action.js';
import { buildInputTree, compareUtf8, type InputEntry, type InputTree } from './input-tree.js';

/** An action described as REAPI v2 messages, and its key: the digest of the serialized Action. */
export interface ActionKey {
  readonly digest: Digest;
  readonly action: EncodedMessage;
  readonly command: EncodedMessage;
  readonly inputTree: InputTree;
}

export interface ActionKeyParams {
  /** The full environment the command runs with (PATH included), as it goes into the key. */
  readonly env: Readonly<Record<string, string>>;
  /** Platform properties (empty for local execution). */
  readonly platform?: Readonly<Record<string, string>>;
  /** Every input, tools included: files with their digests, the contents of tree artifacts, symlinks. */
  readonly inputs: readonly InputEntry[];
}

/**
 * Describes `action` as a REAPI `Command` and `Action` the way Bazel's remote client does, so the
 * same key addresses the local action cache, the disk cache and any remote cache:
 * - arguments as given; environment variables sorted by name;
 * - outputs in `output_paths` (REAPI 2.1+) and, for older servers, `output_files` (files and
 *   symlinks) and `output_directories` (tree artifacts), all sorted;
 * - platform properties sorted by name then value, on the Command and (REAPI 2.2) on the Action;
 * - working directory empty (the input root); `do_not_cache` for `no-cache`; `timeout` when the
 *   action has one (a test's, as Bazel sends it).
 */
export function computeActionKey(action: Action, params: ActionKeyParams): ActionKey {
  const outputs = action.outputs.map((o) => o.execPath).sort(compareUtf8);
  const directories = action.outputs
    .filter((o) => o.type === 'directory')
    .map((o) => o.execPath)
    .sort(compareUtf8);
  const files =
    directories.length === 0
      ? outputs
      : action.outputs
          .filter((o) => o.type !== 'directory')
          .map((o) => o.execPath)
          .sort(compareUtf8);
  const platform = platformOf(params.platform ?? {});
  const command = encodedBytes(
    encodeCommand({
      arguments: [...action.argv],
      environmentVariables: Object.entries(params.env)
        .sort(([a], [b]) => compareUtf8(a, b))
        .map(([name, value]) => ({ name, value })),
      outputFiles: files,
      ...(directories.length > 0 ? { outputDirectories: directories } : {}),
      outputPaths: outputs,
      platform,
    }),
  );
  const inputTree = buildInputTree(params.inputs);
  const doNotCache = action.executionRequirements.includes('no-cache');
  const encodedAction = encodedBytes(
    encodeAction({
      commandDigest: command.digest,
      inputRootDigest: inputTree.rootDigest,
      doNotCache: doNotCache || undefined,
      platform,
      ...(action.timeoutSeconds ? { timeout: durationFromMs(action.timeoutSeconds * 1000) } : {}),
    }),
  );
  return { digest: digestOf(encodedAction.data), action: encodedAction, command, inputTree };
}

function platformOf(properties: Readonly<Record<string, string>>): PlatformFields | undefined {
  const names = Object.keys(properties);
  if (names.length === 0) return undefined;
  return {
    properties: names.map((name) => ({ name, value: properties[name]! })).sort((a, b) => compareUtf8(a.name, b.name) || compareUtf8(a.value, b.value)),
  };
}
