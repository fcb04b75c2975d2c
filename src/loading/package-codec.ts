import { ByteFormatError, ByteReader, ByteWriter, type Position } from '../core/index.js';
import type { Package, PackageError } from './package.js';
import type { PackageDefaults } from './package-builder.js';
import type { AttrValue } from './rules/attribute.js';
import type { GeneratorInfo, RuleTarget, Target } from './target.js';
import { Selector, SelectorList } from './select.js';

/**
 * The package cache's record of one package, in binary:
 *
 *   strings   the distinct strings, each stored once; everything else refers to them by number
 *   header    repository, package and BUILD file
 *   index     each target's name and the byte length of its body, in declaration order
 *   bodies    each target's kind, location and fields; attribute values as tagged JSON-like data
 *   trailer   the package's errors and defaults
 *
 * A target is decoded when it is first asked for, and a string when a decoded target first uses it: a
 * query that follows a few targets of each package (somepath, the deps of one target) decodes those,
 * not whole packages. The decoded package keeps the record's bytes (a view of the cache file, which
 * the loader keeps anyway to write unchanged entries back) until every target has been decoded.
 */

const enum Kind {
  Rule = 0,
  Source = 1,
  Generated = 2,
  PackageGroup = 3,
}

const KIND_CODE: Readonly<Record<Target['kind'], Kind>> = { rule: Kind.Rule, source: Kind.Source, generated: Kind.Generated, package_group: Kind.PackageGroup };

/** Tags of the JSON-like values (attribute values, package defaults). */
const enum Tag {
  Null = 0,
  False = 1,
  True = 2,
  Uint = 3,
  NegativeInt = 4,
  Float = 5,
  String = 6,
  Array = 7,
  Object = 8,
  StringArray = 9,
  /** A select(): its parts, each a plain value or a selector (flag 1: no_match_error, then key/value pairs). */
  Select = 10,
}

/** Rule flags: which optional fields follow. */
const HAS_GENERATOR = 1;
const STARLARK_DEFINED = 2;
const HAS_RULE_DEFINITION = 4;

class RecordWriter {
  /** Where refs and fields go; the record is assembled from it and the string table at the end. */
  body = new ByteWriter(2048);
  private readonly strings = new Map<string, number>();

  ref(s: string): void {
    let i = this.strings.get(s);
    if (i === undefined) {
      i = this.strings.size;
      this.strings.set(s, i);
    }
    this.body.uint(i);
  }

  refs(list: readonly string[]): void {
    this.body.uint(list.length);
    for (const s of list) this.ref(s);
  }

  position(pos: Position, buildFile: string): void {
    // Nearly every location lies in the package's own BUILD file: then only line and column.
    if (pos.file === buildFile) this.body.uint(0);
    else {
      this.body.uint(1);
      this.ref(pos.file);
    }
    this.body.uint(pos.line);
    this.body.uint(pos.col);
  }

  /** JSON-like data as JSON.stringify would keep it: undefined object fields are left out, undefined items are null. */
  value(v: unknown): void {
    const w = this.body;
    if (v === null || v === undefined) w.uint(Tag.Null);
    else if (v === false) w.uint(Tag.False);
    else if (v === true) w.uint(Tag.True);
    else if (typeof v === 'string') {
      w.uint(Tag.String);
      this.ref(v);
    } else if (typeof v === 'number') {
      if (Number.isSafeInteger(v) && !Object.is(v, -0)) {
        w.uint(v >= 0 ? Tag.Uint : Tag.NegativeInt);
        w.uint(Math.abs(v));
      } else {
        w.uint(Tag.Float);
        w.float64(v);
      }
    } else if (v instanceof SelectorList) {
      w.uint(Tag.Select);
      w.uint(v.parts.length);
      for (const part of v.parts) {
        if (!(part instanceof Selector)) {
          w.uint(0);
          this.value(part);
          continue;
        }
        w.uint(1);
        this.ref(part.noMatchError);
        w.uint(part.entries.length);
        for (const [key, x] of part.entries) {
          this.ref(key);
          this.value(x);
        }
      }
    } else if (Array.isArray(v)) {
      if (v.every((x) => typeof x === 'string')) {
        w.uint(Tag.StringArray);
        this.refs(v as string[]);
      } else {
        w.uint(Tag.Array);
        w.uint(v.length);
        for (const x of v) this.value(x);
      }
    } else if (typeof v === 'object') {
      const fields = Object.entries(v).filter(([, x]) => x !== undefined);
      w.uint(Tag.Object);
      w.uint(fields.length);
      for (const [k, x] of fields) {
        this.ref(k);
        this.value(x);
      }
    } else throw new TypeError(`package cache: cannot store a ${typeof v}`);
  }

  /** Starts writing to a new body of about `size` bytes; returns what the previous one holds. */
  switchBody(size: number): Buffer {
    const done = this.body.finish();
    this.body = new ByteWriter(size);
    return done;
  }

  /** The string table followed by `parts`. */
  finish(parts: readonly Uint8Array[]): Buffer {
    const out = new ByteWriter(parts.reduce((n, p) => n + p.length, 16 * this.strings.size + 16));
    out.uint(this.strings.size);
    for (const s of this.strings.keys()) out.string(s);
    for (const p of parts) out.bytes(p);
    return out.finish();
  }
}

function encodeTarget(w: RecordWriter, t: Target, buildFile: string): void {
  const b = w.body;
  b.uint(KIND_CODE[t.kind]);
  w.position(t.location, buildFile);
  switch (t.kind) {
    case 'rule': {
      w.ref(t.ruleClass);
      b.uint(t.attrs.size);
      for (const [name, v] of t.attrs) {
        w.ref(name);
        w.value(v);
      }
      w.refs(t.outputs);
      w.refs(t.dependencies);
      b.uint((t.generator ? HAS_GENERATOR : 0) | (t.starlarkDefined ? STARLARK_DEFINED : 0) | (t.ruleDefinition !== undefined ? HAS_RULE_DEFINITION : 0));
      if (t.generator) {
        w.ref(t.generator.name);
        w.ref(t.generator.function);
        w.ref(t.generator.location);
      }
      if (t.ruleDefinition !== undefined) w.ref(t.ruleDefinition);
      break;
    }
    case 'source':
      if (t.visibility) {
        b.uint(1);
        w.refs(t.visibility);
      } else b.uint(0);
      break;
    case 'generated':
      w.ref(t.generatingRule);
      break;
    case 'package_group':
      w.refs(t.packages);
      w.refs(t.includes);
      break;
  }
}

export function encodePackage(p: Package): Uint8Array {
  const w = new RecordWriter();
  const buildFile = p.buildFile;
  // The bodies one after the other, then the header and index (their strings numbered after the
  // bodies'), then the trailer; the string table goes first in the record.
  const lengths: number[] = [];
  for (const t of p.targets.values()) {
    const start = w.body.length;
    encodeTarget(w, t, buildFile);
    lengths.push(w.body.length - start);
  }
  const bodies = w.switchBody(64 + 4 * lengths.length);
  w.ref(p.repo);
  w.ref(p.pkg);
  w.ref(buildFile);
  w.body.uint(lengths.length);
  let i = 0;
  for (const name of p.targets.keys()) {
    w.ref(name);
    w.body.uint(lengths[i++]!);
  }
  const head = w.switchBody(256);
  w.body.uint(p.errors.length);
  for (const e of p.errors) {
    w.ref(e.message);
    if (e.pos) {
      w.body.uint(1);
      w.position(e.pos, buildFile);
    } else w.body.uint(0);
  }
  w.value(p.defaults);
  const trailer = w.switchBody(16);
  return w.finish([head, bodies, trailer]);
}

/** A record's strings, each decoded on its first use. */
class StringTable {
  private readonly starts: Uint32Array;
  private readonly decoded: (string | undefined)[];

  constructor(private readonly r: ByteReader) {
    const n = r.uint();
    if (n > r.end - r.pos) throw new ByteFormatError('count larger than the record');
    this.starts = new Uint32Array(n);
    this.decoded = new Array<string | undefined>(n);
    for (let i = 0; i < n; i++) {
      this.starts[i] = r.pos;
      r.skipString();
    }
  }

  get(i: number): string {
    let s = this.decoded[i];
    if (s === undefined) {
      const start = this.starts[i];
      if (start === undefined) throw new ByteFormatError('string reference out of range');
      const r = this.r;
      const at = r.pos;
      r.pos = start;
      s = r.string();
      r.pos = at;
      this.decoded[i] = s;
    }
    return s;
  }
}

/** Reads refs, positions and values of one record; shared by its targets' lazy decoding. */
class RecordReader {
  /** Positions in the BUILD file, one object per place: a macro's targets all share its call's. */
  private readonly places = new Map<number, Position>();
  buildFile = '';

  constructor(
    readonly r: ByteReader,
    private readonly strings: StringTable,
  ) {}

  str(): string {
    return this.strings.get(this.r.uint());
  }

  strs(): string[] {
    const n = this.count();
    const out = new Array<string>(n);
    for (let i = 0; i < n; i++) out[i] = this.str();
    return out;
  }

  /** A length, checked against what is left (each item takes at least one byte). */
  count(): number {
    const n = this.r.uint();
    if (n > this.r.end - this.r.pos) throw new ByteFormatError('count larger than the record');
    return n;
  }

  position(): Position {
    if (this.r.uint() !== 0) {
      const file = this.str();
      const line = this.r.uint();
      return { file, line, col: this.r.uint() };
    }
    const line = this.r.uint();
    const col = this.r.uint();
    const key = line * 0x100000 + col;
    let pos = this.places.get(key);
    if (pos === undefined || pos.line !== line || pos.col !== col) {
      pos = { file: this.buildFile, line, col };
      this.places.set(key, pos);
    }
    return pos;
  }

  value(): unknown {
    const r = this.r;
    switch (r.uint()) {
      case Tag.Null:
        return null;
      case Tag.False:
        return false;
      case Tag.True:
        return true;
      case Tag.Uint:
        return r.uint();
      case Tag.NegativeInt:
        return -r.uint();
      case Tag.Float:
        return r.float64();
      case Tag.String:
        return this.str();
      case Tag.StringArray:
        return this.strs();
      case Tag.Array: {
        const n = this.count();
        const out = new Array<unknown>(n);
        for (let i = 0; i < n; i++) out[i] = this.value();
        return out;
      }
      case Tag.Object: {
        const n = this.count();
        const out: Record<string, unknown> = {};
        for (let i = 0; i < n; i++) {
          const k = this.str();
          out[k] = this.value();
        }
        return out;
      }
      case Tag.Select: {
        const parts = new Array<unknown>(this.count());
        for (let i = 0; i < parts.length; i++) {
          if (r.uint() === 0) {
            parts[i] = this.value();
            continue;
          }
          const noMatchError = this.str();
          const entries = new Array<readonly [string, unknown]>(this.count());
          for (let j = 0; j < entries.length; j++) entries[j] = [this.str(), this.value()];
          parts[i] = new Selector(entries, noMatchError);
        }
        return new SelectorList(parts);
      }
      default:
        throw new ByteFormatError('unknown value tag');
    }
  }

  /** The target whose body spans [start, end). */
  target(name: string, start: number, end: number): Target {
    const r = this.r;
    r.pos = start;
    const kind = r.uint();
    const location = this.position();
    let t: Target;
    switch (kind) {
      case Kind.Rule:
        t = this.rule(name, location);
        break;
      case Kind.Source:
        t = r.uint() === 1 ? { kind: 'source', name, location, visibility: this.strs() } : { kind: 'source', name, location };
        break;
      case Kind.Generated:
        t = { kind: 'generated', name, location, generatingRule: this.str() };
        break;
      case Kind.PackageGroup: {
        const packages = this.strs();
        t = { kind: 'package_group', name, location, packages, includes: this.strs() };
        break;
      }
      default:
        throw new ByteFormatError('unknown target kind');
    }
    if (r.pos !== end) throw new ByteFormatError('target body of the wrong length');
    return t;
  }

  private rule(name: string, location: Position): RuleTarget {
    const r = this.r;
    const ruleClass = this.str();
    const attrs = new Map<string, AttrValue>();
    for (let n = this.count(); n > 0; n--) {
      const k = this.str();
      attrs.set(k, this.value() as AttrValue);
    }
    const outputs = this.strs();
    const dependencies = this.strs();
    const flags = r.uint();
    let generator: GeneratorInfo | undefined;
    if (flags & HAS_GENERATOR) {
      const gName = this.str();
      const fn = this.str();
      generator = { name: gName, function: fn, location: this.str() };
    }
    const rule: { -readonly [K in keyof RuleTarget]: RuleTarget[K] } = { kind: 'rule', name, ruleClass, location, attrs, outputs, dependencies };
    if (generator) rule.generator = generator;
    if (flags & STARLARK_DEFINED) rule.starlarkDefined = true;
    if (flags & HAS_RULE_DEFINITION) rule.ruleDefinition = this.str();
    return rule;
  }
}

/** Up to this many targets, a name is looked up by a scan of the names: cheaper than a Map per package. */
const LINEAR_SEARCH_MAX = 32;

/** A decoded package's targets: the index is read at once, each target on first use. */
class RecordTargets implements ReadonlyMap<string, Target> {
  private readonly slots: (Target | undefined)[];
  private reader: RecordReader | undefined;
  private pending: number;

  /** Made for packages too large to search by name. */
  private byName: Map<string, number> | undefined;
  private complete: Map<string, Target> | undefined;

  constructor(
    reader: RecordReader,
    private readonly names: readonly string[],
    private readonly starts: Uint32Array,
  ) {
    this.reader = reader;
    this.slots = new Array<Target | undefined>(names.length);
    this.pending = names.length;
  }

  get size(): number {
    return this.names.length;
  }

  has(name: string): boolean {
    return this.indexOf(name) >= 0;
  }

  get(name: string): Target | undefined {
    if (this.complete !== undefined) return this.complete.get(name);
    const i = this.indexOf(name);
    return i < 0 ? undefined : this.at(i);
  }

  private indexOf(name: string): number {
    const names = this.names;
    if (names.length <= LINEAR_SEARCH_MAX) return names.indexOf(name);
    if (this.byName === undefined) {
      this.byName = new Map();
      for (let i = 0; i < names.length; i++) this.byName.set(names[i]!, i);
    }
    return this.byName.get(name) ?? -1;
  }

  private at(i: number): Target {
    let t = this.slots[i];
    if (t === undefined) {
      // The cache file's CRC and the index's lengths were checked when the record was read: a body
      // that still does not decode is a bug, not a cache miss.
      t = this.reader!.target(this.names[i]!, this.starts[i]!, this.starts[i + 1]!);
      this.slots[i] = t;
      if (--this.pending === 0) this.reader = undefined; // the record's bytes can go
    }
    return t;
  }

  /** Every target, decoded: iterating a package (a wildcard pattern) needs them all anyway. */
  private all(): Map<string, Target> {
    if (this.complete === undefined) {
      this.complete = new Map();
      for (let i = 0; i < this.names.length; i++) this.complete.set(this.names[i]!, this.at(i));
    }
    return this.complete;
  }

  entries(): MapIterator<[string, Target]> {
    return this.all().entries();
  }

  /** The names alone need no target decoded. */
  keys(): MapIterator<string> {
    return this.names.values();
  }

  values(): MapIterator<Target> {
    return this.all().values();
  }

  [Symbol.iterator](): MapIterator<[string, Target]> {
    return this.all().entries();
  }

  forEach(fn: (value: Target, key: string, map: ReadonlyMap<string, Target>) => void, thisArg?: unknown): void {
    for (const [name, t] of this.all()) fn.call(thisArg, t, name, this);
  }
}

/** The Package encodePackage stored; a ByteFormatError when `bytes` is not such a record. */
export function decodePackage(bytes: Uint8Array): Package {
  const r = new ByteReader(bytes);
  const rr = new RecordReader(r, new StringTable(r));
  const repo = rr.str();
  const pkg = rr.str();
  const buildFile = rr.str();
  rr.buildFile = buildFile;
  const n = rr.count();
  const names = new Array<string>(n);
  const starts = new Uint32Array(n + 1);
  const lengths = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    names[i] = rr.str();
    lengths[i] = r.uint();
  }
  let end = r.pos;
  for (let i = 0; i < n; i++) {
    starts[i] = end;
    end += lengths[i]!;
  }
  if (end > r.end) throw new ByteFormatError('target bodies longer than the record');
  starts[n] = end;
  r.pos = end;
  const errors: PackageError[] = [];
  for (let e = rr.count(); e > 0; e--) {
    const message = rr.str();
    errors.push(r.uint() === 1 ? { message, pos: rr.position() } : { message });
  }
  const defaults = rr.value() as PackageDefaults;
  if (!r.done) throw new ByteFormatError('bytes after the package record');
  const targets = new RecordTargets(rr, names, starts);
  return { repo, pkg, buildFile, targets, errors, defaults };
}
