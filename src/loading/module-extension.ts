import { Builtin, None, StarCallable, StarDict, StarObject, StarlarkError, typeName, unpackArgs, type Value } from '../starlark/index.js';
import type { AttributeSpec } from './rules/attribute.js';
import { ruleAttributes } from './bzl-builtins.js';
import { optionalDoc } from './bzl-params.js';

/** The value of `tag_class(attrs, doc)`: the schema of one tag of a module extension. */
export class TagClass extends StarObject {
  constructor(
    readonly attributes: readonly AttributeSpec[],
    readonly doc: string,
  ) {
    super();
  }
  get type(): string {
    return 'tag_class';
  }
  repr(): string {
    return '<tag_class>';
  }
}

/**
 * The value of `module_extension(...)`. Kiln resolves no Bzlmod module graph, so extensions are
 * never run; the value remembers the file that defined it, as Bazel's does (not the global name).
 */
export class ModuleExtension extends StarObject {
  constructor(
    readonly implementation: StarCallable,
    readonly doc: string,
    readonly tagClasses: ReadonlyMap<string, TagClass>,
    /** The label of the .bzl file whose evaluation created it. */
    readonly definingBzlLabel: string,
  ) {
    super();
  }
  get type(): string {
    return 'module_extension';
  }
  repr(): string {
    return '<module_extension>';
  }
}

export const tagClassBuiltin = new Builtin('tag_class', (_t, args, kwargs) => {
  const [attrs, doc] = unpackArgs('tag_class', args, kwargs, ['attrs?', 'doc?']);
  return new TagClass(ruleAttributes(attrs, 'tag_class'), optionalDoc('tag_class', doc));
});

const PARAMS = ['implementation', 'tag_classes?', 'doc?', 'environ?', 'os_dependent?', 'arch_dependent?'];

/** `module_extension(implementation, tag_classes = {}, doc = None, ...)` for the .bzl file `bzlLabel`. */
export function moduleExtensionBuiltin(bzlLabel: string): Builtin {
  return new Builtin('module_extension', (_t, args, kwargs) => {
    const [implementation, tagClasses, doc] = unpackArgs('module_extension', args, kwargs, PARAMS);
    if (!(implementation instanceof StarCallable))
      throw new StarlarkError(`module_extension: for parameter implementation: got ${typeName(implementation!)}, want function`);
    const tags = new Map<string, TagClass>();
    if (tagClasses !== undefined && tagClasses !== None) {
      if (!(tagClasses instanceof StarDict)) throw new StarlarkError(`module_extension: for parameter tag_classes: got ${typeName(tagClasses)}, want dict`);
      for (const k of tagClasses.iterate()) {
        const v: Value = tagClasses.get(k)!;
        if (typeof k !== 'string' || !(v instanceof TagClass))
          throw new StarlarkError('module_extension: for parameter tag_classes: want a dict of string to tag_class');
        tags.set(k, v);
      }
    }
    return new ModuleExtension(implementation, optionalDoc('module_extension', doc), tags, bzlLabel);
  });
}
