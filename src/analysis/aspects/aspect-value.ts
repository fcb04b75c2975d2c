import { KilnError, type Position } from '../../core/index.js';
import type { Action } from '../../actions/index.js';
import { DEFAULT_INFO, OUTPUT_GROUP_INFO, type ProviderInstance } from '../../loading/index.js';
import type { BuildConfiguration } from '../config/build-configuration.js';
import type { ConfiguredTarget, FileEntry } from '../configured/configured-target.js';
import type { AspectDescriptor } from './aspect-descriptor.js';

/**
 * The result of applying one aspect to one configured target (Bazel's AspectValue): the providers
 * its implementation returned, its output groups and the actions it registered.
 */
export interface AspectValue {
  readonly descriptor: AspectDescriptor;
  /** The target it was applied to (for an alias, its actual target). */
  readonly label: string;
  readonly config: BuildConfiguration;
  /** By provider key; OutputGroupInfo is kept as `outputGroups`. */
  readonly providers: ReadonlyMap<string, ProviderInstance>;
  readonly outputGroups: ReadonlyMap<string, readonly FileEntry[]>;
  readonly actions: readonly Action[];
}

/**
 * A dependency as its dependent sees it (Bazel's MergedConfiguredTarget): the target's providers
 * and those of the aspects applied to it. A provider or output group given twice is Bazel's error,
 * reported at the dependent (`at`).
 */
export function mergedTarget(ct: ConfiguredTarget, aspects: readonly AspectValue[], at: Position | undefined): ConfiguredTarget {
  if (aspects.length === 0) return ct;
  const providers = new Map(ct.providers ?? []);
  const outputGroups = new Map(ct.outputGroups);
  providers.delete(OUTPUT_GROUP_INFO.key);
  for (const value of aspects) {
    for (const [key, instance] of value.providers) {
      // A target that is not a Starlark rule still has a DefaultInfo (made from its files).
      if (providers.has(key) || key === DEFAULT_INFO.key) throw new KilnError(`Provider ${instance.provider.name} provided twice`, at);
      providers.set(key, instance);
    }
    for (const [name, files] of value.outputGroups) {
      if (outputGroups.has(name)) throw new KilnError(`Output group ${name} provided twice`, at);
      outputGroups.set(name, files);
    }
  }
  return { ...ct, providers, outputGroups };
}
