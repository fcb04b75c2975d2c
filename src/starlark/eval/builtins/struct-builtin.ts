import { StarlarkError } from '../starlark-error.js';
import { Builtin } from '../values/callable.js';
import { StarStruct } from '../values/struct.js';

/** Bazel's `struct(**kwargs)`: an immutable record of named fields. */
export const structBuiltin = new Builtin('struct', (_t, args, kwargs) => {
  if (args.length > 0) throw new StarlarkError('struct: unexpected positional arguments');
  return new StarStruct(kwargs ?? []);
});
