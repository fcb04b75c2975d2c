import { StarlarkError } from '../starlark-error.js';
import { typeName } from '../values/describe.js';
import { StarDict } from '../values/dict.js';
import { StarList, StarTuple } from '../values/list.js';
import { StarStruct } from '../values/struct.js';
import type { Value } from '../values/value.js';

/**
 * `struct.to_proto()`: the struct as a protocol buffer text message, as Bazel's
 * StructImpl.printProtoTextMessage writes it: fields in sorted order, a struct as a nested message,
 * a list as a repeated field, a dict as repeated `key`/`value` messages, strings quoted and escaped.
 */
export function structToProto(s: StarStruct): string {
  const out: string[] = [];
  message(s, out, 0);
  return out.join('');
}

function message(s: StarStruct, out: string[], indent: number): void {
  s.names.forEach((name, i) => field(name, s.values[i]!, out, indent));
}

function field(key: string, value: Value, out: string[], indent: number): void {
  const pad = '  '.repeat(indent);
  if (value instanceof StarStruct) {
    out.push(`${pad}${key} {\n`);
    message(value, out, indent + 1);
    out.push(`${pad}}\n`);
  } else if (value instanceof StarDict) {
    for (const k of value.table.keys()) {
      const v = value.get(k)!;
      out.push(`${pad}${key} {\n`);
      scalarOrMessage('key', k, out, indent + 1);
      scalarOrMessage('value', v, out, indent + 1);
      out.push(`${pad}}\n`);
    }
  } else if (value instanceof StarList || value instanceof StarTuple) {
    for (const item of value.elems) {
      if (item instanceof StarList || item instanceof StarTuple) throw new StarlarkError(`nested lists are not allowed in text format for key '${key}'`);
      field(key, item, out, indent);
    }
  } else {
    scalarOrMessage(key, value, out, indent);
  }
}

function scalarOrMessage(key: string, value: Value, out: string[], indent: number): void {
  const pad = '  '.repeat(indent);
  if (value instanceof StarStruct) {
    field(key, value, out, indent);
  } else if (typeof value === 'string') {
    out.push(`${pad}${key}: "${escape(value)}"\n`);
  } else if (typeof value === 'boolean') {
    out.push(`${pad}${key}: ${value}\n`);
  } else if (typeName(value) === 'int') {
    out.push(`${pad}${key}: ${String(value)}\n`);
  } else {
    throw new StarlarkError(`Invalid text format, expected a struct, a dict, a string, a bool, or an int but got a ${typeName(value)} for key '${key}'`);
  }
}

/** Text-format escaping of a string field (TextFormat.escapeDoubleQuotesAndBackslashes). */
function escape(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}
