import type protobuf from 'protobufjs';

/**
 * Reads protobuf text format into a plain message object for `type` (camelCase field names, enums
 * as numbers): enough of the format for ModuleInfo, so tests can check that a `.textproto` holds
 * the same message as the binary output.
 */
export function readTextFormat(type: protobuf.Type, text: string): Record<string, unknown> {
  const tokens = tokenize(text);
  let i = 0;
  const peek = () => tokens[i];
  const next = () => {
    const tok = tokens[i++];
    if (tok === undefined) throw new Error('unexpected end of text');
    return tok;
  };
  // Each turn of the loop consumes a field's tokens, so it ends with them.
  const message = (t: protobuf.Type, close: string | undefined): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (let tok = peek(); tok !== undefined && tok.kind !== 'punct'; tok = peek()) {
      const name = next().text.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());
      const field = t.fields[name];
      if (!field) throw new Error(`no field ${name} in ${t.name}`);
      field.resolve();
      let value: unknown;
      if (field.resolvedType && 'fieldsArray' in field.resolvedType) {
        if (peek()?.text === ':') i++;
        if (next().text !== '{') throw new Error(`expected '{' after ${name}`);
        value = message(field.resolvedType as protobuf.Type, '}');
      } else {
        if (next().text !== ':') throw new Error(`expected ':' after ${name}`);
        const v = next();
        if (field.resolvedType) value = (field.resolvedType as protobuf.Enum).values[v.text];
        else if (v.kind === 'string') value = v.bytes!.toString('utf8');
        else if (v.text === 'true' || v.text === 'false') value = v.text === 'true';
        else value = Number(v.text);
      }
      if (field.repeated) ((out[name] ??= []) as unknown[]).push(value);
      else out[name] = value;
    }
    const end = peek();
    if (close !== undefined) {
      if (end?.text !== close) throw new Error(`expected '${close}'`);
      i++;
    } else if (end !== undefined) throw new Error(`unexpected '${end.text}'`);
    return out;
  };
  return message(type, undefined);
}

interface Tok {
  readonly kind: 'word' | 'string' | 'punct';
  readonly text: string;
  readonly bytes?: Buffer;
}

const SIMPLE: Readonly<Record<string, number>> = { a: 7, b: 8, f: 12, n: 10, r: 13, t: 9, v: 11, '\\': 92, "'": 39, '"': 34 };

function tokenize(text: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) i++;
    else if (c === '#') i = text.indexOf('\n', i) < 0 ? text.length : text.indexOf('\n', i);
    else if ('{}:'.includes(c)) out.push({ kind: 'punct', text: text[i++]! });
    else if (c === '"') {
      const bytes: number[] = [];
      i++;
      while (text[i] !== '"') {
        if (i >= text.length) throw new Error('unterminated string');
        if (text[i] === '\\') {
          const e = text[i + 1]!;
          if (/[0-7]/.test(e)) {
            bytes.push(parseInt(text.slice(i + 1, i + 4), 8));
            i += 4;
          } else {
            bytes.push(SIMPLE[e]!);
            i += 2;
          }
        } else {
          bytes.push(...Buffer.from(text[i]!, 'utf8'));
          i++;
        }
      }
      i++;
      out.push({ kind: 'string', text: '', bytes: Buffer.from(bytes) });
    } else {
      const m = /^[-A-Za-z0-9_.]+/.exec(text.slice(i));
      if (!m) throw new Error(`unexpected character '${c}'`);
      out.push({ kind: 'word', text: m[0] });
      i += m[0].length;
    }
  }
  return out;
}
