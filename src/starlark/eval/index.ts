/**
 * Starlark evaluation: values, builtins and the evaluator. Other parts of src/starlark import from
 * here; other layers go through src/starlark/index.ts.
 */
export type { Value, ReprPath } from './values/value.js';
export { StarObject, None } from './values/value.js';
export { StarFloat } from './values/float.js';
export { StarBytes } from './values/bytes.js';
export { StarList, StarTuple } from './values/list.js';
export { StarDict } from './values/dict.js';
export { StarSet } from './values/set.js';
export { StarRange } from './values/range.js';
export { StarStruct, StarModule } from './values/struct.js';
export { StarCallable, Builtin, BoundMethod, type Kwargs, type BuiltinImpl } from './values/callable.js';
export { StarFunction } from './function.js';
export { typeName, truth, repr, str, hashValue } from './values/describe.js';
export { equals, compare } from './values/equality.js';
export { unpackArgs, positionalArgs } from './args.js';
export { StarlarkError, EvalError, type CallFrame } from './starlark-error.js';
export { Thread, MAX_CALL_DEPTH, type ThreadHooks, type ModuleGlobals } from './thread.js';
export { execFile, execResolvedFile, isUniversal, UNIVERSAL } from './exec-file.js';
export { universe, UNIVERSAL_NAMES } from './builtins/universe.js';
export { jsonModule, encodeJson, decodeJson } from './builtins/json-module.js';
export { structBuiltin } from './builtins/struct-builtin.js';
export { assertHelpers } from './builtins/assert-helpers.js';
