import { BYTES_METHODS } from './builtins/bytes-methods.js';
import { DICT_METHODS } from './builtins/dict-methods.js';
import { LIST_METHODS } from './builtins/list-methods.js';
import { SET_METHODS } from './builtins/set-methods.js';
import { STRING_METHODS } from './builtins/string-methods.js';
import { StarlarkError } from './starlark-error.js';
import { nearestName } from '../resolve/nearest-name.js';
import { positionalArgs } from './args.js';
import { encodeJson } from './builtins/json-module.js';
import { structToProto } from './builtins/struct-proto.js';
import type { Thread } from './thread.js';
import { StarBytes } from './values/bytes.js';
import { BoundMethod, type Kwargs, type MethodImpl } from './values/callable.js';
import { typeName } from './values/describe.js';
import { StarDict } from './values/dict.js';
import { StarList } from './values/list.js';
import { StarSet } from './values/set.js';
import { StarStruct } from './values/struct.js';
import { StarObject, type Value } from './values/value.js';

function methodsOf(v: Value): ReadonlyMap<string, MethodImpl<never>> | undefined {
  if (typeof v === 'string') return STRING_METHODS;
  if (v instanceof StarList) return LIST_METHODS;
  if (v instanceof StarDict) return DICT_METHODS;
  if (v instanceof StarSet) return SET_METHODS;
  if (v instanceof StarBytes) return BYTES_METHODS;
  return undefined;
}

function missing(v: Value, name: string): never {
  const own = v instanceof StarObject ? v.missingAttrMessage(name) : undefined;
  if (own !== undefined) throw new StarlarkError(own);
  const hint = nearestName(name, attrNames(v));
  const suffix = hint ? ` (did you mean .${hint}?)` : '';
  if (v instanceof StarStruct) throw new StarlarkError(`struct has no .${name} field${suffix}`);
  throw new StarlarkError(`${typeName(v)} has no .${name} field or method${suffix}`);
}

/** `x.name`, or undefined when x has no such field or method. */
export function findAttr(v: Value, name: string): Value | undefined {
  const methods = methodsOf(v);
  if (methods) {
    const m = methods.get(name);
    return m ? new BoundMethod(name, v, typeName(v), m as MethodImpl<Value>) : undefined;
  }
  if (v instanceof StarObject) {
    const a = v.attr(name);
    if (a === undefined && v instanceof StarStruct) {
      // Bazel's struct methods (StructImpl): there while --incompatible_struct_has_no_methods is off, its default.
      if (name === 'to_json') {
        return new BoundMethod('to_json', v, 'struct', (_t, s, args, kwargs) => {
          positionalArgs('to_json', args, kwargs, 0, 0);
          return encodeJson(s);
        });
      }
      if (name === 'to_proto') {
        return new BoundMethod('to_proto', v, 'struct', (_t, s, args, kwargs) => {
          positionalArgs('to_proto', args, kwargs, 0, 0);
          return structToProto(s as StarStruct);
        });
      }
    }
    return a;
  }
  return undefined;
}

/** `x.name`, failing with starlark-go's `T has no .name field or method`. */
export function getAttr(v: Value, name: string): Value {
  const a = findAttr(v, name);
  if (a === undefined) missing(v, name);
  return a;
}

/** A struct's methods, which `dir(struct(...))` lists with its fields (Bazel's StructImpl). */
const STRUCT_METHODS = ['to_json', 'to_proto'];

/** The names `dir(x)` lists, sorted. */
export function attrNames(v: Value): string[] {
  const methods = methodsOf(v);
  if (methods) return [...methods.keys()].sort();
  if (v instanceof StarStruct) return [...v.attrNames(), ...STRUCT_METHODS].sort();
  if (v instanceof StarObject) return v.attrNames().sort();
  return [];
}

/** Prefixes a method's own errors with its name, as starlark-go's methods do (`append: cannot ...`). */
export function methodError(e: unknown, name: string): unknown {
  if (e instanceof StarlarkError && !e.message.startsWith(`${name}: `)) return new StarlarkError(`${name}: ${e.message}`);
  return e;
}

/**
 * `x.name(args)` without allocating a bound method for the built-in types' methods: the evaluator's
 * path for every method call.
 */
export function callMethod(thread: Thread, v: Value, name: string, args: Value[], kwargs: Kwargs | null): Value {
  const methods = methodsOf(v);
  if (methods) {
    const m = methods.get(name) as MethodImpl<Value> | undefined;
    if (m === undefined) missing(v, name);
    try {
      return m(thread, v, args, kwargs);
    } catch (e) {
      throw methodError(e, name);
    }
  }
  return thread.call(getAttr(v, name), args, kwargs);
}
