import { positionalArgs, unpackArgs, wantString } from '../args.js';
import { StarlarkError } from '../starlark-error.js';
import { Builtin, StarCallable, type Kwargs } from '../values/callable.js';
import { MAX_NESTING, repr, typeName } from '../values/describe.js';
import { StarDict } from '../values/dict.js';
import { formatFloat, StarFloat } from '../values/float.js';
import { normalizeBig } from '../values/int.js';
import { StarList, StarTuple } from '../values/list.js';
import { StarModule } from '../values/struct.js';
import { None, type StarObject, type Value } from '../values/value.js';
import { dictEntries } from '../operators.js';

/** Quotes a string as JSON; lone surrogates become U+FFFD, as Go's encoder does for invalid text. */
function quoteJson(s: string): string {
  let out = '';
  let last = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdfff) continue;
    const next = s.charCodeAt(i + 1);
    if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      i++;
      continue;
    }
    out += `${s.slice(last, i)}\ufffd`;
    last = i + 1;
  }
  return JSON.stringify(last === 0 ? s : out + s.slice(last));
}

function encodeValue(x: Value, path: StarObject[]): string {
  if (x === None) return 'null';
  switch (typeof x) {
    case 'boolean':
      return x ? 'true' : 'false';
    case 'number':
    case 'bigint':
      return String(x);
    case 'string':
      return quoteJson(x);
  }
  if (x instanceof StarFloat) {
    if (!Number.isFinite(x.value)) throw new StarlarkError(`cannot encode non-finite float ${formatFloat(x.value, 'g')}`);
    return formatFloat(x.value, 'g');
  }
  if (path.includes(x)) throw new StarlarkError('cycle in JSON structure');
  if (path.length >= MAX_NESTING) throw new StarlarkError('maximum nesting depth exceeded');
  path.push(x);
  try {
    if (x instanceof StarDict) {
      const entries = dictEntries(x);
      for (const [k] of entries) if (typeof k !== 'string') throw new StarlarkError(`dict has ${typeName(k)} key, want string`);
      entries.sort((a, b) => ((a[0] as string) < (b[0] as string) ? -1 : (a[0] as string) > (b[0] as string) ? 1 : 0));
      const parts = entries.map(([k, v]) => {
        try {
          return `${quoteJson(k as string)}:${encodeValue(v, path)}`;
        } catch (e) {
          throw nested(e, `in dict key ${repr(k)}`);
        }
      });
      return `{${parts.join(',')}}`;
    }
    const elems = x instanceof StarList || x instanceof StarTuple ? x.elems : undefined;
    if (elems) {
      return `[${elems
        .map((e, i) => {
          try {
            return encodeValue(e, path);
          } catch (err) {
            throw nested(err, `at ${x.type} index ${i}`);
          }
        })
        .join(',')}]`;
    }
    const names = x.attrNames();
    if (names.length > 0 || x.type === 'struct') {
      const sorted = [...names].sort();
      const parts = sorted.map((n) => {
        try {
          return `${quoteJson(n)}:${encodeValue(x.attr(n)!, path)}`;
        } catch (e) {
          throw nested(e, `in field .${n}`);
        }
      });
      return `{${parts.join(',')}}`;
    }
    const it = x instanceof StarCallable ? undefined : x.iterate();
    if (it) return `[${[...it].map((e) => encodeValue(e, path)).join(',')}]`;
    throw new StarlarkError(`cannot encode ${typeName(x)} as JSON`);
  } finally {
    path.pop();
  }
}

function nested(e: unknown, context: string): unknown {
  return e instanceof StarlarkError ? new StarlarkError(`${context}: ${e.message}`) : e;
}

/** Encodes a Starlark value as compact JSON (dict keys sorted), as starlark-go's json.encode. */
export function encodeJson(x: Value): string {
  return encodeValue(x, []);
}

class JsonSyntaxError extends Error {}

/** Decodes JSON text into Starlark values: objects become dicts, numbers ints unless they have a fraction or exponent. */
export function decodeJson(s: string): Value {
  let i = 0;
  const fail = (msg: string): never => {
    throw new JsonSyntaxError(`at offset ${i}, ${msg}`);
  };
  const quoteChar = (c: string): string => (c === "'" ? "'\\''" : `'${c}'`);
  const skip = (): void => {
    while (i < s.length && (s[i] === ' ' || s[i] === '\t' || s[i] === '\n' || s[i] === '\r')) i++;
  };
  let depth = 0;
  const parse = (): Value => {
    skip();
    if (depth >= MAX_NESTING) fail('maximum nesting depth exceeded');
    if (i >= s.length) fail('unexpected end of file');
    const c = s[i]!;
    if (c === '"') {
      const start = i;
      i++;
      for (;;) {
        if (i >= s.length) fail('unclosed string literal');
        const d = s[i]!;
        if (d === '"') break;
        if (d === '\\') i++;
        i++;
      }
      i++;
      try {
        return JSON.parse(s.slice(start, i)) as string;
      } catch (e) {
        return fail(`invalid escape in string: ${(e as Error).message}`);
      }
    }
    if (c === '[') {
      i++;
      depth++;
      const out: Value[] = [];
      skip();
      if (s[i] === ']') {
        i++;
        depth--;
        return new StarList(out);
      }
      for (;;) {
        out.push(parse());
        skip();
        if (i >= s.length) fail('unexpected end of file');
        if (s[i] === ',') {
          i++;
          continue;
        }
        if (s[i] === ']') {
          i++;
          depth--;
          return new StarList(out);
        }
        fail(`got ${quoteChar(s[i]!)}, want ',' or ']'`);
      }
    }
    if (c === '{') {
      i++;
      depth++;
      const d = new StarDict();
      skip();
      if (s[i] === '}') {
        i++;
        depth--;
        return d;
      }
      for (;;) {
        const key = parse();
        if (typeof key !== 'string') fail(`got ${typeName(key)} for object key, want string`);
        skip();
        if (i >= s.length) fail('unexpected end of file');
        if (s[i] !== ':') fail(`after object key, got ${quoteChar(s[i]!)}, want ':' `);
        i++;
        d.set(key, parse());
        skip();
        if (i >= s.length) fail('unexpected end of file');
        if (s[i] === ',') {
          i++;
          continue;
        }
        if (s[i] === '}') {
          i++;
          depth--;
          return d;
        }
        fail(`in object, got ${quoteChar(s[i]!)}, want ',' or '}'`);
      }
    }
    if (s.startsWith('null', i)) {
      i += 4;
      return None;
    }
    if (s.startsWith('true', i)) {
      i += 4;
      return true;
    }
    if (s.startsWith('false', i)) {
      i += 5;
      return false;
    }
    if (c === '-' || (c >= '0' && c <= '9')) {
      const start = i;
      i++;
      while (i < s.length && /[0-9.eE+-]/.test(s[i]!)) i++;
      const num = s.slice(start, i);
      if (!/^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/.test(num)) fail(`invalid number: ${num}`);
      if (/[.eE]/.test(num)) return new StarFloat(Number(num));
      return normalizeBig(BigInt(num));
    }
    return fail(`unexpected character ${quoteChar(c)}`);
  };
  const v = parse();
  skip();
  if (i < s.length) fail(`unexpected character ${quoteChar(s[i]!)} after value`);
  return v;
}

/** Re-indents JSON text, as Go's json.Indent. */
function indentJson(src: string, prefix: string, indent: string): string {
  let v: unknown;
  try {
    v = JSON.parse(src);
  } catch (e) {
    throw new StarlarkError(`invalid character in JSON: ${(e as Error).message}`, { cause: e });
  }
  // Re-serialise from the parsed tree but keep the source's number spelling by re-encoding tokens.
  const tokens = src.match(/"(?:[^"\\]|\\.)*"|[{}[\],:]|[^\s{}[\],:]+/g) ?? [];
  void v;
  let out = '';
  let depth = 0;
  const newline = () => `\n${prefix}${indent.repeat(depth)}`;
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k]!;
    const next = tokens[k + 1];
    if (t === '{' || t === '[') {
      out += t;
      if (next === '}' || next === ']') {
        out += next;
        k++;
        continue;
      }
      depth++;
      out += newline();
    } else if (t === '}' || t === ']') {
      depth--;
      out += newline() + t;
    } else if (t === ',') out += `,${newline()}`;
    else if (t === ':') out += ': ';
    else out += t;
  }
  return out;
}

function encodeIndentArgs(fn: string, args: Value[], kwargs: Kwargs | null): [Value, string, string] {
  if (args.length > 1) throw new StarlarkError(`${fn}: got ${args.length} arguments, want 1`);
  const a = unpackArgs(fn, args, kwargs, ['x', 'prefix?', 'indent?']);
  const prefix = a[1] === undefined ? '' : wantString(fn, 'prefix', a[1]);
  const indent = a[2] === undefined ? '\t' : wantString(fn, 'indent', a[2]);
  return [a[0]!, prefix, indent];
}

function prefixErrors<T>(fn: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof StarlarkError) throw new StarlarkError(`${fn}: ${e.message}`, { cause: e });
    throw e;
  }
}

/** The `json` module of starlark-go's lib/json: encode, decode, indent, encode_indent. */
export function jsonModule(): StarModule {
  return new StarModule(
    'json',
    new Map<string, Value>([
      [
        'encode',
        new Builtin('json.encode', (_t, args, kwargs) => {
          positionalArgs('json.encode', args, kwargs, 1, 1);
          return prefixErrors('json.encode', () => encodeJson(args[0]!));
        }),
      ],
      [
        'decode',
        new Builtin('json.decode', (_t, args, kwargs) => {
          // The text is positional only (as starlark-go); `default` may be given by name.
          for (const [k] of kwargs ?? []) {
            if (k !== 'default') throw new StarlarkError(`json.decode: unexpected keyword argument ${repr(k)}`);
          }
          const a = unpackArgs('json.decode', args, kwargs, ['x', 'default?']);
          const s = wantString('json.decode', 'x', a[0]!);
          try {
            return decodeJson(s);
          } catch (e) {
            if (!(e instanceof JsonSyntaxError)) throw e;
            if (a[1] !== undefined) return a[1];
            throw new StarlarkError(`json.decode: ${e.message}`, { cause: e });
          }
        }),
      ],
      [
        'indent',
        new Builtin('json.indent', (_t, args, kwargs) => {
          if (args.length > 1) throw new StarlarkError(`json.indent: got ${args.length} arguments, want 1`);
          const a = unpackArgs('json.indent', args, kwargs, ['str', 'prefix?', 'indent?']);
          const s = wantString('json.indent', 'str', a[0]!);
          const prefix = a[1] === undefined ? '' : wantString('json.indent', 'prefix', a[1]);
          const indent = a[2] === undefined ? '\t' : wantString('json.indent', 'indent', a[2]);
          return prefixErrors('json.indent', () => indentJson(s, prefix, indent));
        }),
      ],
      [
        'encode_indent',
        new Builtin('json.encode_indent', (_t, args, kwargs) => {
          const [x, prefix, indent] = encodeIndentArgs('json.encode_indent', args, kwargs);
          return prefixErrors('json.encode_indent', () => indentJson(encodeJson(x), prefix, indent));
        }),
      ],
    ]),
  );
}
