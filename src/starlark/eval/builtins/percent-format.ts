import { StarlarkError } from '../starlark-error.js';
import { repr, str, typeName } from '../values/describe.js';
import { StarDict } from '../values/dict.js';
import { floatToInt, formatFloat, StarFloat } from '../values/float.js';
import { StarTuple } from '../values/list.js';
import type { Value } from '../values/value.js';

function toInt(v: Value, conv: string): number | bigint {
  if (typeof v === 'number' || typeof v === 'bigint') return v;
  if (v instanceof StarFloat) {
    try {
      return floatToInt(v.value);
    } catch (e) {
      throw new StarlarkError(`%${conv} format requires integer: ${(e as Error).message}`, { cause: e });
    }
  }
  throw new StarlarkError(`%${conv} format requires integer: cannot convert ${typeName(v)} to int`);
}

/** `format % args`: %s %r %d %i %o %x %X %e %E %f %F %g %G %c %% and %(key)s with a dict. */
export function percentFormat(format: string, x: Value): string {
  let out = '';
  let index = 0;
  const tuple = x instanceof StarTuple ? x.elems : undefined;
  const nargs = tuple ? tuple.length : 1;
  let pos = 0;
  for (;;) {
    const i = format.indexOf('%', pos);
    if (i < 0) {
      out += format.slice(pos);
      break;
    }
    out += format.slice(pos, i);
    pos = i + 1;
    if (format[pos] === '%') {
      out += '%';
      pos++;
      continue;
    }
    let arg: Value;
    if (format[pos] === '(') {
      const j = format.indexOf(')', pos + 1);
      if (j < 0) throw new StarlarkError('incomplete format key');
      const key = format.slice(pos + 1, j);
      if (!(x instanceof StarDict)) throw new StarlarkError('format requires a mapping');
      const v = x.get(key);
      if (v === undefined) throw new StarlarkError(`key ${repr(key)} not in dict`);
      arg = v;
      pos = j + 1;
    } else {
      if (pos >= format.length) throw new StarlarkError('incomplete format');
      if (index >= nargs) throw new StarlarkError('not enough arguments for format string');
      arg = tuple ? tuple[index]! : x;
    }
    if (pos >= format.length) throw new StarlarkError('incomplete format');
    const c = format[pos]!;
    switch (c) {
      case 's':
        out += str(arg);
        break;
      case 'r':
        out += repr(arg);
        break;
      case 'd':
      case 'i':
        out += toInt(arg, c).toString();
        break;
      case 'o':
        out += toInt(arg, c).toString(8);
        break;
      case 'x':
        out += toInt(arg, c).toString(16);
        break;
      case 'X':
        out += toInt(arg, c).toString(16).toUpperCase();
        break;
      case 'e':
      case 'f':
      case 'g':
      case 'E':
      case 'F':
      case 'G': {
        let f: number;
        if (arg instanceof StarFloat) f = arg.value;
        else if (typeof arg === 'number') f = arg;
        else if (typeof arg === 'bigint') f = Number(arg);
        else throw new StarlarkError(`%${c} format requires float, not ${typeName(arg)}`);
        out += formatFloat(f, c);
        break;
      }
      case 'c':
        if (typeof arg === 'number' || typeof arg === 'bigint') {
          if (typeof arg === 'bigint' || arg < 0 || arg > 0x10ffff) {
            throw new StarlarkError(`%c format requires a valid Unicode code point, got ${arg}`);
          }
          out += String.fromCodePoint(arg);
        } else if (typeof arg === 'string') {
          if (arg.length === 0 || [...arg].length !== 1) throw new StarlarkError('%c format requires a single-character string');
          out += arg;
        } else throw new StarlarkError(`%c format requires int or single-character string, not ${typeName(arg)}`);
        break;
      default:
        throw new StarlarkError(`unknown conversion %${c}`);
    }
    pos++;
    index++;
  }
  if (index < nargs && !(x instanceof StarDict)) throw new StarlarkError('too many arguments for format string');
  return out;
}
