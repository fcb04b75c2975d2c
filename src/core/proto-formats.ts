import type protobuf from 'protobufjs';
import type { MessageCodec } from './proto.js';

/**
 * A message in proto3's JSON mapping, as Bazel's `--output=jsonproto` prints it (JsonFormat's
 * printer: lowerCamelCase names, default values left out, two-space indentation).
 */
export function protoJson<T, I>(codec: MessageCodec<T, I>, message: I): string {
  const type = codec.type;
  const object = type.toObject(type.fromObject(message as Record<string, unknown>), { enums: String, longs: Number, json: true });
  return JSON.stringify(object, null, 2);
}

/** lowerCamelCase back to the .proto's snake_case name (`depSetOfFiles` → `dep_set_of_files`). */
function protoFieldName(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/**
 * A message in protobuf's text format (TextFormat.printer: fields in field-number order, default
 * scalars left out, nested messages in braces indented by two spaces), as `--output=textproto` prints it.
 */
export function protoText<T, I>(codec: MessageCodec<T, I>, message: I): string {
  const type = codec.type;
  return textOf(type, type.fromObject(message as Record<string, unknown>) as unknown as Record<string, unknown>, '');
}

function textOf(type: protobuf.Type, message: Record<string, unknown>, indent: string): string {
  let out = '';
  const fields = [...type.fieldsArray].sort((a, b) => a.id - b.id);
  for (const field of fields) {
    field.resolve();
    const value = message[field.name];
    const values = field.repeated ? ((value as unknown[] | undefined) ?? []) : value === undefined || value === null ? [] : [value];
    const name = protoFieldName(field.name);
    for (const v of values) {
      const nested = field.resolvedType;
      if (nested && 'fieldsArray' in nested) {
        out += `${indent}${name} {\n${textOf(nested as protobuf.Type, v as Record<string, unknown>, `${indent}  `)}${indent}}\n`;
        continue;
      }
      if (!field.repeated && isDefault(v)) continue;
      out += `${indent}${name}: ${scalarText(v, nested)}\n`;
    }
  }
  return out;
}

function isDefault(v: unknown): boolean {
  return v === 0 || v === false || v === '' || (v instanceof Uint8Array && v.length === 0);
}

function scalarText(v: unknown, enumType: protobuf.Type | protobuf.Enum | null): string {
  if (enumType && 'valuesById' in enumType) return enumType.valuesById[v as number] ?? String(v);
  if (typeof v === 'string') return quoteText(v);
  if (v instanceof Uint8Array) return quoteText(Buffer.from(v).toString('latin1'));
  return String(v);
}

/** A text-format string literal: C escapes for quotes, backslashes and control bytes; UTF-8 kept. */
function quoteText(s: string): string {
  let out = '"';
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (code < 0x20 || code === 0x7f) out += `\\${code.toString(8).padStart(3, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}
