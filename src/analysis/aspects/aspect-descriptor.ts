import { KilnError, type Position } from '../../core/index.js';
import type { ProviderRef, StarlarkAspect } from '../../loading/index.js';

/** A parameter value of an aspect: its public attributes are bool, int or string. */
export type AspectParameter = string | number | boolean;

/**
 * One aspect with the values of its parameters (Bazel's AspectDescriptor): what is applied along an
 * edge. Two descriptors with equal ids are the same application.
 */
export interface AspectDescriptor {
  readonly aspect: StarlarkAspect;
  /** `//pkg:defs.bzl%name` */
  readonly key: string;
  readonly parameters: readonly (readonly [string, AspectParameter])[];
  /** The key, then the parameters: unique per application. */
  readonly id: string;
}

/** Who asks for an aspect with parameters: the rule target whose attributes give their values. */
export interface AspectRequester {
  readonly label: string;
  readonly location: Position;
  /** The value of the rule's attribute of that name, when it has one. */
  valueOf(name: string): unknown;
}

/** Bazel's list of allowed values: `'a', 'b' or 'c'`. */
function allowedList(values: readonly (string | number)[]): string {
  const quoted = values.map((v) => `'${v}'`);
  return quoted.length < 2 ? quoted.join('') : `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)!}`;
}

/**
 * The descriptor of `aspect` with parameters taken from the requesting rule's attributes of the
 * same names (else the aspect's defaults); a value outside the parameter's `values` is Bazel's error.
 */
export function describeAspect(aspect: StarlarkAspect, requester?: AspectRequester): AspectDescriptor {
  const key = aspect.key;
  if (key === undefined) throw new KilnError('Aspects should be top-level values in extension files that define them.', requester?.location);
  const parameters: [string, AspectParameter][] = [];
  for (const spec of aspect.attributes) {
    if (spec.name.startsWith('_')) continue;
    const given = requester?.valueOf(spec.name);
    const value = typeof given === 'string' || typeof given === 'number' || typeof given === 'boolean' ? given : (spec.defaultValue as AspectParameter);
    if (spec.allowedValues && !spec.allowedValues.includes(value as string | number)) {
      throw new KilnError(
        `${requester?.label ?? key}: invalid value in '${spec.name}' attribute: has to be one of ${allowedList(spec.allowedValues)} instead of '${String(value)}'`,
        requester?.location,
      );
    }
    parameters.push([spec.name, value]);
  }
  const id = parameters.length === 0 ? key : `${key}[${parameters.map(([n, v]) => `${n}=${JSON.stringify(v)}`).join(',')}]`;
  return { aspect, key, parameters, id };
}

/** Provider alternatives (`[[A, B], [C]]`) satisfied by a set of provider keys; no alternatives: always. */
export function satisfies(alternatives: readonly (readonly ProviderRef[])[], has: (key: string) => boolean): boolean {
  return alternatives.length === 0 || alternatives.some((set) => set.every((p) => has(p.key)));
}

/** Whether `descriptor` sees `base` on a target (Bazel: `required_aspect_providers` against what `base` advertises in `provides`). */
export function seesAspect(descriptor: AspectDescriptor, base: AspectDescriptor): boolean {
  const required = descriptor.aspect.definition.requiredAspectProviders;
  if (required.length === 0) return false;
  const provided = new Set(base.aspect.provides.map((p) => p.key));
  return required.some((set) => set.every((p) => provided.has(p.key)));
}

/** Whether the aspect propagates along attribute `name` (`attr_aspects`, `"*"` for every attribute). */
export function propagatesAlong(descriptor: AspectDescriptor, name: string): boolean {
  const along = descriptor.aspect.attrAspects;
  return along.includes('*') || along.includes(name);
}
