import type { ProviderInstance } from '../../loading/index.js';
import type { Action } from '../../actions/index.js';
import type { ConfigMatch } from '../config/config-matching.js';
import type { CcInfo, FileEntry, RunEnvironment } from '../configured/configured-target.js';

/** What a rule implementation returns; the analyzer adds label, configuration, visibility and testonly. */
export interface RuleResult {
  readonly files: readonly FileEntry[];
  readonly runfiles: readonly FileEntry[];
  readonly outputGroups?: ReadonlyMap<string, readonly FileEntry[]>;
  readonly configMatch?: ConfigMatch;
  readonly templateVariables?: ReadonlyMap<string, string>;
  readonly actions?: readonly Action[];
  /** An executable or test rule's `args` and `env`, expanded (see ConfiguredTarget.runEnvironment). */
  readonly runEnvironment?: RunEnvironment;
  /** A Starlark rule's providers by key (see ConfiguredTarget.providers). */
  readonly providers?: ReadonlyMap<string, ProviderInstance>;
  readonly executable?: FileEntry;
  /** A C++ rule's CcInfo. */
  readonly cc?: CcInfo;
}

/** Keeps the first of each exec path, in order. */
export function uniqueFiles(entries: Iterable<FileEntry>): FileEntry[] {
  const seen = new Set<string>();
  const out: FileEntry[] = [];
  for (const e of entries) {
    if (seen.has(e.artifact.execPath)) continue;
    seen.add(e.artifact.execPath);
    out.push(e);
  }
  return out;
}
