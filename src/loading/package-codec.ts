import { ByteFormatError, ByteReader, ByteWriter, type Position } from '../core/index.js';
import type { Package, PackageError } from './package.js';
import type { PackageDefaults } from './package-builder.js';
import type { AttrValue } from './rules/attribute.js';
import type { GeneratorInfo, RuleTarget, Target } from './target.js';

/**
 * The package cache's record of one package, in binary: targets with their fixed fields in order
 * and attribute values as tagged JSON-like data. Each distinct string is written where it is first
 * used and referred to by number afterwards (a label named by three attributes is stored and decoded
 * once). Decoding builds the Package directly, without an intermediate JSON tree.
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
}

/** Rule flags: which optional fields follow. */
const HAS_GENERATOR = 1;
const STARLARK_DEFINED = 2;
const HAS_RULE_DEFINITION = 4;

class RecordWriter {
  readonly body = new ByteWriter(2048);
  private readonly strings = new Map<string, number>();

  /** A string's first use writes it (after a 0); later uses write its number plus one. */
  ref(s: string): void {
    const i = this.strings.get(s);
    if (i === undefined) {
      this.strings.set(s, this.strings.size);
      this.body.uint(0);
      this.body.string(s);
    } else this.body.uint(i + 1);
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

  finish(): Buffer {
    return this.body.finish();
  }
}

export function encodePackage(p: Package): Uint8Array {
  const w = new RecordWriter();
  const b = w.body;
  const buildFile = p.buildFile;
  w.ref(p.repo);
  w.ref(p.pkg);
  w.ref(buildFile);
  b.uint(p.targets.size);
  for (const t of p.targets.values()) {
    // Every target starts with its kind, name and location, as decodePackage reads them.
    b.uint(KIND_CODE[t.kind]);
    w.ref(t.name);
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
  b.uint(p.errors.length);
  for (const e of p.errors) {
    w.ref(e.message);
    if (e.pos) {
      b.uint(1);
      w.position(e.pos, buildFile);
    } else b.uint(0);
  }
  w.value(p.defaults);
  return w.finish();
}

class RecordReader {
  readonly r: ByteReader;
  private readonly strings: string[] = [];
  buildFile = '';

  constructor(bytes: Uint8Array) {
    this.r = new ByteReader(bytes);
  }

  str(): string {
    const n = this.r.uint();
    if (n === 0) {
      const s = this.r.string();
      this.strings.push(s);
      return s;
    }
    const s = this.strings[n - 1];
    if (s === undefined) throw new ByteFormatError('string reference out of range');
    return s;
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

  /** Positions in the BUILD file, one object per place: a macro's targets all share its call's. */
  private readonly places = new Map<number, Position>();

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
      default:
        throw new ByteFormatError('unknown value tag');
    }
  }
}

function decodeRule(rr: RecordReader, name: string, location: Position): RuleTarget {
  const r = rr.r;
  const ruleClass = rr.str();
  const attrs = new Map<string, AttrValue>();
  for (let n = rr.count(); n > 0; n--) {
    const k = rr.str();
    attrs.set(k, rr.value() as AttrValue);
  }
  const outputs = rr.strs();
  const dependencies = rr.strs();
  const flags = r.uint();
  let generator: GeneratorInfo | undefined;
  if (flags & HAS_GENERATOR) {
    const gName = rr.str();
    const fn = rr.str();
    generator = { name: gName, function: fn, location: rr.str() };
  }
  const rule: { -readonly [K in keyof RuleTarget]: RuleTarget[K] } = { kind: 'rule', name, ruleClass, location, attrs, outputs, dependencies };
  if (generator) rule.generator = generator;
  if (flags & STARLARK_DEFINED) rule.starlarkDefined = true;
  if (flags & HAS_RULE_DEFINITION) rule.ruleDefinition = rr.str();
  return rule;
}

/** The Package encodePackage stored; a ByteFormatError when `bytes` is not such a record. */
export function decodePackage(bytes: Uint8Array): Package {
  const rr = new RecordReader(bytes);
  const r = rr.r;
  const repo = rr.str();
  const pkg = rr.str();
  const buildFile = rr.str();
  rr.buildFile = buildFile;
  const targets = new Map<string, Target>();
  for (let n = rr.count(); n > 0; n--) {
    const kind = r.uint();
    const name = rr.str();
    const location = rr.position();
    let t: Target;
    switch (kind) {
      case Kind.Rule:
        t = decodeRule(rr, name, location);
        break;
      case Kind.Source:
        t = r.uint() === 1 ? { kind: 'source', name, location, visibility: rr.strs() } : { kind: 'source', name, location };
        break;
      case Kind.Generated:
        t = { kind: 'generated', name, location, generatingRule: rr.str() };
        break;
      case Kind.PackageGroup: {
        const packages = rr.strs();
        t = { kind: 'package_group', name, location, packages, includes: rr.strs() };
        break;
      }
      default:
        throw new ByteFormatError('unknown target kind');
    }
    targets.set(name, t);
  }
  const errors: PackageError[] = [];
  for (let n = rr.count(); n > 0; n--) {
    const message = rr.str();
    errors.push(r.uint() === 1 ? { message, pos: rr.position() } : { message });
  }
  const defaults = rr.value() as PackageDefaults;
  if (!r.done) throw new ByteFormatError('bytes after the package record');
  return { repo, pkg, buildFile, targets, errors, defaults };
}
