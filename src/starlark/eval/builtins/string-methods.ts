import { positionalArgs, unpackArgs, wantBool, wantOptionalIndex, wantSmallInt, wantString } from '../args.js';
import { StarlarkError } from '../starlark-error.js';
import { elementsOf } from '../iteration.js';
import type { Kwargs, MethodImpl } from '../values/callable.js';
import { typeName } from '../values/describe.js';
import { StarList, StarTuple } from '../values/list.js';
import { quoteString } from '../values/string-repr.js';
import { None, StarObject, type Value } from '../values/value.js';
import { strFormat } from './str-format.js';

/**
 * A lazy view of a string's elements (`s.elems()`, `s.codepoints()`, ...): iterable, not indexable.
 * Strings are sequences of UTF-16 code units (see the layer README): `elems` yields 1-unit strings,
 * `elem_ords` their numeric values, `codepoints`/`codepoint_ords` whole Unicode code points.
 */
class StringElems extends StarObject {
  constructor(
    readonly s: string,
    readonly method: 'elems' | 'elem_ords' | 'codepoints' | 'codepoint_ords',
  ) {
    super();
  }
  get type(): string {
    return `string.${this.method}`;
  }
  override iterate(): Iterable<Value> {
    const s = this.s;
    switch (this.method) {
      case 'elems':
        return Array.from({ length: s.length }, (_, i) => s[i]!);
      case 'elem_ords':
        return Array.from({ length: s.length }, (_, i) => s.charCodeAt(i));
      case 'codepoints':
        return [...s];
      case 'codepoint_ords':
        return [...s].map((c) => c.codePointAt(0)!);
    }
  }
  repr(): string {
    return `${quoteString(this.s)}.${this.method}()`;
  }
}

/**
 * Start and end of a substring search, as Python's s[start:end]; end < start (including a start
 * beyond the string) means the search fails.
 */
function span(s: string, fn: string, args: (Value | undefined)[], at: number): [number, number] {
  const n = s.length;
  let start = wantOptionalIndex(fn, 'start', args[at]) ?? 0;
  let end = wantOptionalIndex(fn, 'end', args[at + 1]) ?? n;
  if (start < 0) start = Math.max(0, start + n);
  if (end < 0) end = Math.max(0, end + n);
  if (end > n) end = n;
  if (start > n) return [n + 1, n];
  return [start, end];
}

function find(s: string, fn: string, args: Value[], kwargs: Kwargs | null, last: boolean): number {
  const a = unpackArgs(fn, args, kwargs, ['sub', 'start?', 'end?']);
  const sub = wantString(fn, 'sub', a[0]!);
  const [start, end] = span(s, fn, a, 1);
  if (end < start) return -1;
  const hay = s.slice(start, end);
  const i = last ? hay.lastIndexOf(sub) : hay.indexOf(sub);
  return i < 0 ? -1 : i + start;
}

/** Unicode white space (Python's str.isspace set), without a RegExp on this hot path. */
function isSpaceCode(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f);
  if (c < 0x85) return false;
  return (
    c === 0x85 || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000
  );
}

function strip(s: string, chars: Value | undefined, fn: string, left: boolean, right: boolean): string {
  let lo = 0;
  let hi = s.length;
  if (chars === undefined || chars === None) {
    while (left && lo < hi && isSpaceCode(s.charCodeAt(lo))) lo++;
    while (right && hi > lo && isSpaceCode(s.charCodeAt(hi - 1))) hi--;
  } else {
    const set = wantString(fn, 'chars', chars);
    while (left && lo < hi && set.includes(s[lo]!)) lo++;
    while (right && hi > lo && set.includes(s[hi - 1]!)) hi--;
  }
  return s.slice(lo, hi);
}

function prefixes(fn: string, v: Value): string[] {
  if (typeof v === 'string') return [v];
  if (v instanceof StarTuple) {
    return v.elems.map((e, i) => {
      if (typeof e !== 'string') throw new StarlarkError(`${fn}: want string, got ${typeName(e)}, for element ${i}`);
      return e;
    });
  }
  throw new StarlarkError(`${fn}: got ${typeName(v)}, want string or tuple of string`);
}

/** Python's `str.split()` / `rsplit()` without a separator: runs of white space separate words. */
function splitWhitespace(s: string, maxsplit: number, fromRight: boolean): string[] {
  const out: string[] = [];
  const n = s.length;
  if (!fromRight) {
    let i = 0;
    for (;;) {
      while (i < n && isSpaceCode(s.charCodeAt(i))) i++;
      if (i >= n) break;
      if (maxsplit >= 0 && out.length === maxsplit) {
        out.push(s.slice(i)); // the remainder keeps its trailing white space, as Python
        break;
      }
      const start = i;
      while (i < n && !isSpaceCode(s.charCodeAt(i))) i++;
      out.push(s.slice(start, i));
    }
    return out;
  }
  let i = n;
  for (;;) {
    while (i > 0 && isSpaceCode(s.charCodeAt(i - 1))) i--;
    if (i <= 0) break;
    if (maxsplit >= 0 && out.length === maxsplit) {
      out.push(s.slice(0, i));
      break;
    }
    const end = i;
    while (i > 0 && !isSpaceCode(s.charCodeAt(i - 1))) i--;
    out.push(s.slice(i, end));
  }
  return out.reverse();
}

function split(s: string, fn: string, args: Value[], kwargs: Kwargs | null, fromRight: boolean): Value {
  if (kwargs === null && args.length === 1 && typeof args[0] === 'string' && args[0] !== '') {
    return new StarList(s.split(args[0])); // the common case, natively
  }
  const a = unpackArgs(fn, args, kwargs, ['sep?', 'maxsplit?']);
  const maxsplit = a[1] === undefined || a[1] === None ? -1 : wantSmallInt(fn, 'maxsplit', a[1]);
  const sepv = a[0];
  if (sepv === undefined || sepv === None) return new StarList(splitWhitespace(s, maxsplit, fromRight));
  if (typeof sepv !== 'string') throw new StarlarkError(`${fn}: got ${typeName(sepv)} for separator, want string`);
  if (sepv === '') throw new StarlarkError(`${fn}: empty separator`);
  const parts = s.split(sepv);
  if (maxsplit < 0 || parts.length <= maxsplit + 1) return new StarList(parts);
  if (!fromRight) return new StarList([...parts.slice(0, maxsplit), parts.slice(maxsplit).join(sepv)]);
  const cut = parts.length - maxsplit;
  return new StarList([parts.slice(0, cut).join(sepv), ...parts.slice(cut)]);
}

const CASED = /[\p{Lu}\p{Ll}\p{Lt}]/u;

function isTitle(s: string): boolean {
  // Uppercase/titlecase letters only after uncased characters, lowercase only after cased ones.
  let cased = false;
  let prevCased = false;
  for (const c of s) {
    if (/[\p{Lu}\p{Lt}]/u.test(c)) {
      if (prevCased) return false;
      prevCased = true;
      cased = true;
    } else if (/\p{Ll}/u.test(c)) {
      if (!prevCased) return false;
      prevCased = true;
      cased = true;
    } else prevCased = false;
  }
  return cased;
}

function title(s: string): string {
  let out = '';
  let prevLetter = false;
  for (const c of s) {
    const letter = /\p{L}/u.test(c);
    out += letter ? (prevLetter ? c.toLowerCase() : c.toUpperCase()) : c;
    prevLetter = letter;
  }
  return out;
}

function noArgs(fn: string, args: Value[], kwargs: Kwargs | null): void {
  positionalArgs(fn, args, kwargs, 0, 0);
}

function partition(s: string, fn: string, args: Value[], kwargs: Kwargs | null, last: boolean): Value {
  positionalArgs(fn, args, kwargs, 1, 1);
  const sep = wantString(fn, 1, args[0]!);
  if (sep === '') throw new StarlarkError(`${fn}: empty separator`);
  const i = last ? s.lastIndexOf(sep) : s.indexOf(sep);
  if (i < 0) return new StarTuple(last ? ['', '', s] : [s, '', '']);
  return new StarTuple([s.slice(0, i), sep, s.slice(i + sep.length)]);
}

function predicate(test: (s: string) => boolean): MethodImpl<string> {
  return (_t, s, args, kwargs) => {
    noArgs('is', args, kwargs);
    return test(s);
  };
}

/** Every method of `string` (the spec's list plus starlark-go's elem/codepoint views). */
export const STRING_METHODS: ReadonlyMap<string, MethodImpl<string>> = new Map<string, MethodImpl<string>>([
  [
    'capitalize',
    (_t, s, args, kwargs) => {
      noArgs('capitalize', args, kwargs);
      const cps = [...s];
      return cps.length === 0 ? '' : cps[0]!.toUpperCase() + cps.slice(1).join('').toLowerCase();
    },
  ],
  ['codepoint_ords', (_t, s, args, kwargs) => (noArgs('codepoint_ords', args, kwargs), new StringElems(s, 'codepoint_ords'))],
  ['codepoints', (_t, s, args, kwargs) => (noArgs('codepoints', args, kwargs), new StringElems(s, 'codepoints'))],
  [
    'count',
    (_t, s, args, kwargs) => {
      const a = unpackArgs('count', args, kwargs, ['sub', 'start?', 'end?']);
      const sub = wantString('count', 'sub', a[0]!);
      const [start, end] = span(s, 'count', a, 1);
      if (end < start) return 0;
      if (sub === '') return end - start + 1;
      let n = 0;
      for (let i = s.indexOf(sub, start); i >= 0 && i + sub.length <= end; i = s.indexOf(sub, i + sub.length)) n++;
      return n;
    },
  ],
  ['elem_ords', (_t, s, args, kwargs) => (noArgs('elem_ords', args, kwargs), new StringElems(s, 'elem_ords'))],
  ['elems', (_t, s, args, kwargs) => (noArgs('elems', args, kwargs), new StringElems(s, 'elems'))],
  [
    'endswith',
    (_t, s, args, kwargs) => {
      const a = unpackArgs('endswith', args, kwargs, ['suffix', 'start?', 'end?']);
      const wanted = prefixes('endswith', a[0]!);
      const [start, end] = span(s, 'endswith', a, 1);
      if (end < start) return false;
      const sub = s.slice(start, end);
      return wanted.some((p) => sub.endsWith(p));
    },
  ],
  ['find', (_t, s, args, kwargs) => find(s, 'find', args, kwargs, false)],
  ['format', (_t, s, args, kwargs) => strFormat(s, args, kwargs)],
  [
    'index',
    (_t, s, args, kwargs) => {
      const i = find(s, 'index', args, kwargs, false);
      if (i < 0) throw new StarlarkError('index: substring not found');
      return i;
    },
  ],
  ['isalnum', predicate((s) => /^[\p{L}\p{N}]+$/u.test(s))],
  ['isalpha', predicate((s) => /^\p{L}+$/u.test(s))],
  ['isdigit', predicate((s) => /^\p{Nd}+$/u.test(s))],
  ['islower', predicate((s) => CASED.test(s) && s === s.toLowerCase())],
  ['isspace', predicate((s) => s.length > 0 && [...s].every((c) => isSpaceCode(c.charCodeAt(0))))],
  ['istitle', predicate(isTitle)],
  ['isupper', predicate((s) => CASED.test(s) && s === s.toUpperCase())],
  [
    'join',
    (_t, s, args, kwargs) => {
      positionalArgs('join', args, kwargs, 1, 1);
      const elems = elementsOf(args[0]!);
      if (elems === undefined) throw new StarlarkError(`join: got ${typeName(args[0]!)}, want iterable`);
      let out = '';
      for (let i = 0; i < elems.length; i++) {
        const e = elems[i]!;
        if (typeof e !== 'string') throw new StarlarkError(`join: in list, want string, got ${typeName(e)}`);
        out += i === 0 ? e : s + e;
      }
      return out;
    },
  ],
  ['lower', (_t, s, args, kwargs) => (noArgs('lower', args, kwargs), s.toLowerCase())],
  ['lstrip', (_t, s, args, kwargs) => (positionalArgs('lstrip', args, kwargs, 0, 1), strip(s, args[0], 'lstrip', true, false))],
  ['partition', (_t, s, args, kwargs) => partition(s, 'partition', args, kwargs, false)],
  [
    'removeprefix',
    (_t, s, args, kwargs) => {
      positionalArgs('removeprefix', args, kwargs, 1, 1);
      const p = wantString('removeprefix', 1, args[0]!);
      return s.startsWith(p) ? s.slice(p.length) : s;
    },
  ],
  [
    'removesuffix',
    (_t, s, args, kwargs) => {
      positionalArgs('removesuffix', args, kwargs, 1, 1);
      const p = wantString('removesuffix', 1, args[0]!);
      return p !== '' && s.endsWith(p) ? s.slice(0, s.length - p.length) : s;
    },
  ],
  [
    'replace',
    (_t, s, args, kwargs) => {
      const a = unpackArgs('replace', args, kwargs, ['old', 'new', 'count?']);
      const oldS = wantString('replace', 'old', a[0]!);
      const newS = wantString('replace', 'new', a[1]!);
      const count = a[2] === undefined ? -1 : wantSmallInt('replace', 'count', a[2]);
      if (count < 0) {
        // replaceAll with a string replacement expands `$&`-style patterns: only use it without `$`.
        if (oldS !== '' && !newS.includes('$')) return s.replaceAll(oldS, newS);
        return s.replaceAll(oldS, () => newS);
      }
      let out = '';
      let rest = s;
      for (let k = 0; k < count; k++) {
        const i = rest.indexOf(oldS);
        if (i < 0) break;
        if (oldS === '') {
          out += newS + (rest[0] ?? '');
          rest = rest.slice(1);
          if (rest === '' && k + 1 < count) {
            out += newS;
            break;
          }
          continue;
        }
        out += rest.slice(0, i) + newS;
        rest = rest.slice(i + oldS.length);
      }
      return out + rest;
    },
  ],
  ['rfind', (_t, s, args, kwargs) => find(s, 'rfind', args, kwargs, true)],
  [
    'rindex',
    (_t, s, args, kwargs) => {
      const i = find(s, 'rindex', args, kwargs, true);
      if (i < 0) throw new StarlarkError('rindex: substring not found');
      return i;
    },
  ],
  ['rpartition', (_t, s, args, kwargs) => partition(s, 'rpartition', args, kwargs, true)],
  ['rsplit', (_t, s, args, kwargs) => split(s, 'rsplit', args, kwargs, true)],
  ['rstrip', (_t, s, args, kwargs) => (positionalArgs('rstrip', args, kwargs, 0, 1), strip(s, args[0], 'rstrip', false, true))],
  ['split', (_t, s, args, kwargs) => split(s, 'split', args, kwargs, false)],
  [
    'splitlines',
    (_t, s, args, kwargs) => {
      const a = unpackArgs('splitlines', args, kwargs, ['keepends?']);
      const keep = a[0] !== undefined && wantBool('splitlines', 'keepends', a[0]);
      const lines: string[] = [];
      const re = /\r\n|\r|\n/g;
      let last = 0;
      let m: RegExpExecArray | null;
      while ((m = re.exec(s))) {
        lines.push(s.slice(last, keep ? m.index + m[0].length : m.index));
        last = m.index + m[0].length;
      }
      if (last < s.length) lines.push(s.slice(last));
      return new StarList(lines);
    },
  ],
  [
    'startswith',
    (_t, s, args, kwargs) => {
      const a = unpackArgs('startswith', args, kwargs, ['prefix', 'start?', 'end?']);
      const wanted = prefixes('startswith', a[0]!);
      const [start, end] = span(s, 'startswith', a, 1);
      if (end < start) return false;
      const sub = s.slice(start, end);
      return wanted.some((p) => sub.startsWith(p));
    },
  ],
  ['strip', (_t, s, args, kwargs) => (positionalArgs('strip', args, kwargs, 0, 1), strip(s, args[0], 'strip', true, true))],
  ['title', (_t, s, args, kwargs) => (noArgs('title', args, kwargs), title(s))],
  ['upper', (_t, s, args, kwargs) => (noArgs('upper', args, kwargs), s.toUpperCase())],
]);
