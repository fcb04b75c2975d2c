import { KilnError } from '../../core/index.js';
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

/** The descriptor of `aspect` with parameters taken from `valueOf` (the requesting rule's attribute of that name). */
export function describeAspect(aspect: StarlarkAspect, valueOf: (name: string) => unknown = () => undefined): AspectDescriptor {
  const key = aspect.key;
  if (key === undefined) throw new KilnError('Aspects should be top-level values in extension files that define them.');
  const parameters: [string, AspectParameter][] = [];
  for (const spec of aspect.attributes) {
    if (spec.name.startsWith('_')) continue;
    const given = valueOf(spec.name);
    const value = typeof given === 'string' || typeof given === 'number' || typeof given === 'boolean' ? given : (spec.defaultValue as AspectParameter);
    if (spec.allowedValues && !spec.allowedValues.includes(value as string | number)) {
      throw new KilnError(
        `${key}: invalid value in '${spec.name}' attribute: has to be one of ${spec.allowedValues.map((v) => `'${v}'`).join(', ')} instead of '${String(value)}'`,
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
