import { repr, StarDict, StarList, StarTuple, typeName, type Value } from '../../starlark/index.js';
import { Label, type PackageContext } from '../label.js';
import { DEFAULT_CONDITION, SelectorList } from '../select.js';
import { StarLabel } from '../starlark-label.js';
import { type AttributeSpec, type AttrValue, type PlainAttrValue, TYPE_NAMES } from './attribute.js';

/** A value that does not fit an attribute's type; the message is Bazel's. */
export class ConversionError extends Error {}

/**
 * Converts a Starlark value to an attribute value of `spec`'s type. `what` names the attribute the
 * way Bazel does: `attribute 'srcs' in 'genrule' rule`.
 */
export function convertAttribute(spec: AttributeSpec, v: Value, ctx: PackageContext, ruleClass: string): AttrValue {
  const what = `attribute '${spec.name}' in '${ruleClass}' rule`;
  if (v instanceof SelectorList) {
    if (!spec.configurable) throw new ConversionError(`attribute "${spec.name}" is not configurable`);
    return v.map(
      (value) => convertPlain(spec, value, ctx, what),
      (key) => (key === DEFAULT_CONDITION ? key : parseLabel(key, ctx, `select key of ${what}`)),
    );
  }
  return convertPlain(spec, v, ctx, what);
}

function mismatch(type: string, what: string, v: Value): never {
  throw new ConversionError(`expected value of type '${type}' for ${what}, but got ${repr(v)} (${typeName(v)})`);
}

function parseLabel(raw: string, ctx: PackageContext, what: string): string {
  try {
    return Label.parse(raw, ctx).toString();
  } catch (e) {
    throw new ConversionError(`invalid label '${raw}' in ${what}: ${(e as Error).message}`, { cause: e });
  }
}

function elements(v: Value, type: string, what: string): readonly Value[] {
  if (v instanceof StarList || v instanceof StarTuple) return v.elems;
  return mismatch(type, what, v);
}

function dictEntries(v: Value, type: string, what: string): [Value, Value][] {
  if (!(v instanceof StarDict)) return mismatch(type, what, v);
  const out: [Value, Value][] = [];
  for (const k of v.iterate()) out.push([k, v.get(k)!]);
  return out;
}

function str(v: Value, what: string): string {
  if (v instanceof StarLabel) return v.label.toString();
  return typeof v === 'string' ? v : mismatch('string', what, v);
}

function convertPlain(spec: AttributeSpec, v: Value, ctx: PackageContext, what: string): PlainAttrValue {
  const bazelType = TYPE_NAMES[spec.type];
  switch (spec.type) {
    case 'string':
      if (typeof v !== 'string') mismatch(bazelType, what, v);
      checkAllowed(spec, v);
      return v;
    case 'bool':
      // Bazel accepts the ints 0 and 1 for booleans.
      if (typeof v === 'boolean') return v;
      if (v === 0 || v === 1) return v === 1;
      return mismatch(bazelType, what, v);
    case 'int':
      if (typeof v !== 'number' || v < -(2 ** 31) || v >= 2 ** 31) return mismatch(bazelType, what, v);
      checkAllowed(spec, v);
      return v;
    case 'label':
      return parseLabel(str(v, what), ctx, what);
    case 'output':
      return str(v, what);
    case 'string_list':
    case 'license':
    case 'output_list':
      return elements(v, bazelType, what).map((e, i) => (typeof e === 'string' ? e : mismatch('string', `element ${i} of ${what}`, e)));
    case 'int_list':
      return elements(v, bazelType, what).map((e, i) => (typeof e === 'number' ? e : mismatch('int', `element ${i} of ${what}`, e)));
    case 'label_list':
      return elements(v, bazelType, what).map((e, i) => parseLabel(str(e, `element ${i} of ${what}`), ctx, `element ${i} of ${what}`));
    case 'string_dict':
      return dictEntries(v, bazelType, what).map(([k, x]) => [str(k, `dict key element of ${what}`), str(x, `dict value element of ${what}`)] as const);
    case 'string_list_dict':
      return dictEntries(v, bazelType, what).map(
        ([k, x]) =>
          [
            str(k, `dict key element of ${what}`),
            elements(x, 'list(string)', `dict value element of ${what}`).map((e) => str(e, `dict value element of ${what}`)),
          ] as const,
      );
    case 'label_keyed_string_dict':
      return dictEntries(v, bazelType, what).map(
        ([k, x]) => [parseLabel(str(k, `dict key element of ${what}`), ctx, `dict key element of ${what}`), str(x, `dict value element of ${what}`)] as const,
      );
    case 'label_list_dict':
      return dictEntries(v, bazelType, what).map(
        ([k, x]) =>
          [
            str(k, `dict key element of ${what}`),
            elements(x, 'list(label)', `dict value element of ${what}`).map((e) => parseLabel(str(e, `dict value element of ${what}`), ctx, what)),
          ] as const,
      );
  }
}

function checkAllowed(spec: AttributeSpec, v: string | number): void {
  const allowed = spec.allowedValues;
  if (!allowed || allowed.includes(v)) return;
  const q = allowed.map((a) => `'${a}'`);
  const list = q.length > 1 ? `${q.slice(0, -1).join(', ')} or ${q[q.length - 1]}` : q.join('');
  // Bazel's AllowedValueSet wording.
  throw new ConversionError(`invalid value in '${spec.name}' attribute: has to be one of ${list} instead of '${v}'`);
}
