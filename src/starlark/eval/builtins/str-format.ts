import { StarlarkError } from '../starlark-error.js';
import type { Kwargs } from '../values/callable.js';
import { repr, str } from '../values/describe.js';
import type { Value } from '../values/value.js';

/** `"...".format(*args, **kwargs)` with starlark-go's rules and messages. */
export function strFormat(format: string, args: Value[], kwargs: Kwargs | null): string {
  let auto = false;
  let manual = false;
  let out = '';
  let index = 0;
  let rest = format;
  for (;;) {
    const i = rest.indexOf('{');
    let literal = i >= 0 ? rest.slice(0, i) : rest;
    // "}}" is a literal '}'; a lone '}' is an error.
    for (;;) {
      const j = literal.indexOf('}');
      if (j < 0) {
        out += literal;
        break;
      }
      if (literal[j + 1] !== '}') throw new StarlarkError("format: single '}' in format");
      out += literal.slice(0, j + 1);
      literal = literal.slice(j + 2);
    }
    if (i < 0) break;
    if (rest[i + 1] === '{') {
      out += '{';
      rest = rest.slice(i + 2);
      continue;
    }
    rest = rest.slice(i + 1);
    const close = rest.indexOf('}');
    if (close < 0) throw new StarlarkError("format: unmatched '{' in format");
    let field = rest.slice(0, close);
    rest = rest.slice(close + 1);
    let conv = 's';
    let spec = '';
    let name: string;
    const bang = field.indexOf('!');
    if (bang < 0) {
      const colon = field.indexOf(':');
      if (colon < 0) name = field;
      else {
        name = field.slice(0, colon);
        spec = field.slice(colon + 1);
      }
    } else {
      name = field.slice(0, bang);
      field = field.slice(bang + 1);
      const colon = field.indexOf(':');
      if (colon < 0) conv = field;
      else {
        conv = field.slice(0, colon);
        spec = field.slice(colon + 1);
      }
    }
    let arg: Value | undefined;
    if (name === '') {
      if (manual) throw new StarlarkError('format: cannot switch from manual field specification to automatic field numbering');
      auto = true;
      if (index >= args.length) throw new StarlarkError('format: tuple index out of range');
      arg = args[index++];
    } else if (/^[0-9]+$/.test(name)) {
      if (auto) throw new StarlarkError('format: cannot switch from automatic field numbering to manual field specification');
      manual = true;
      const num = Number(name);
      if (num >= args.length) throw new StarlarkError('format: tuple index out of range');
      arg = args[num];
    } else {
      arg = kwargs?.find((kv) => kv[0] === name)?.[1];
      if (arg === undefined) {
        if (name.includes('.')) throw new StarlarkError(`format: attribute syntax x.y is not supported in replacement fields: ${name}`);
        if (name.includes('[')) throw new StarlarkError(`format: element syntax a[i] is not supported in replacement fields: ${name}`);
        if (name.includes('{')) throw new StarlarkError('format: nested replacement fields not supported');
        throw new StarlarkError(`format: keyword ${name} not found`);
      }
    }
    if (spec !== '') throw new StarlarkError(`format spec features not supported in replacement fields: ${spec}`);
    if (conv === 's') out += str(arg!);
    else if (conv === 'r') out += repr(arg!);
    else throw new StarlarkError(`format: unknown conversion ${JSON.stringify(conv)}`);
  }
  return out;
}
