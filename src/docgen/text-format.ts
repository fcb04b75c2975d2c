import type protobuf from 'protobufjs';

/**
 * Protocol buffer text format as Java's `TextFormat.printer()` writes it (what Bazel writes to a
 * starlark_doc_extract `.textproto`): fields in field-number order, proto3 default scalars left out,
 * two-space indentation, enums by name, and strings as escaped UTF-8 bytes (non-ASCII in octal).
 */
export function printTextFormat(type: protobuf.Type, message: Readonly<Record<string, unknown>>): string {
  const out: string[] = [];
  printMessage(type, message, '', out);
  return out.join('');
}

function printMessage(type: protobuf.Type, message: Readonly<Record<string, unknown>>, indent: string, out: string[]): void {
  const fields = [...type.fieldsArray].sort((a, b) => a.id - b.id);
  for (const field of fields) {
    field.resolve();
    const value = message[field.name];
    if (value === undefined || value === null) continue;
    const name = protoFieldName(field.name);
    const values = field.repeated ? (value as readonly unknown[]) : [value];
    for (const v of values) {
      const resolved = field.resolvedType;
      if (resolved && 'fieldsArray' in resolved) {
        out.push(`${indent}${name} {\n`);
        printMessage(resolved as protobuf.Type, v as Record<string, unknown>, `${indent}  `, out);
        out.push(`${indent}}\n`);
        continue;
      }
      if (!field.repeated && isDefaultScalar(v)) continue;
      out.push(`${indent}${name}: ${scalarText(field, resolved as protobuf.Enum | null, v)}\n`);
    }
  }
}

/** protobufjs names fields in camelCase; the text format uses the .proto's snake_case names. */
function protoFieldName(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

function isDefaultScalar(v: unknown): boolean {
  return v === '' || v === 0 || v === false;
}

function scalarText(field: protobuf.Field, enumType: protobuf.Enum | null, v: unknown): string {
  if (enumType) return enumType.valuesById[v as number] ?? String(v);
  if (field.type === 'string') return `"${escapeText(Buffer.from(v as string, 'utf8'))}"`;
  if (field.type === 'bytes') return `"${escapeText(Buffer.from(v as Uint8Array))}"`;
  return String(v);
}

const ESCAPES: Readonly<Record<number, string>> = {
  0x07: '\\a',
  0x08: '\\b',
  0x0c: '\\f',
  0x0a: '\\n',
  0x0d: '\\r',
  0x09: '\\t',
  0x0b: '\\v',
  0x5c: '\\\\',
  0x27: "\\'",
  0x22: '\\"',
};

/** Java's TextFormat.escapeBytes: C escapes, printable ASCII as is, every other byte as three octal digits. */
export function escapeText(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) {
    const e = ESCAPES[b];
    if (e) s += e;
    else if (b >= 0x20 && b < 0x7f) s += String.fromCharCode(b);
    else s += `\\${b.toString(8).padStart(3, '0')}`;
  }
  return s;
}
