/**
 * Quotes a string the way starlark-go's `repr` does: double quotes, C-style escapes for control
 * characters, `\xHH` for other ASCII control bytes and `\uXXXX` for lone surrogates.
 */
export function quoteString(s: string): string {
  // Fast path: printable ASCII without quotes or backslashes. (A loop, not a RegExp: repr runs deep
  // in recursion, where V8 cannot afford to compile a regular expression.)
  let plain = true;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) {
      plain = false;
      break;
    }
  }
  if (plain) return `"${s}"`;
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    switch (c) {
      case 0x07:
        out += '\\a';
        break;
      case 0x08:
        out += '\\b';
        break;
      case 0x0c:
        out += '\\f';
        break;
      case 0x0a:
        out += '\\n';
        break;
      case 0x0d:
        out += '\\r';
        break;
      case 0x09:
        out += '\\t';
        break;
      case 0x0b:
        out += '\\v';
        break;
      case 0x22:
        out += '\\"';
        break;
      case 0x5c:
        out += '\\\\';
        break;
      default:
        if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
        else if (c >= 0xd800 && c <= 0xdfff) {
          const next = s.charCodeAt(i + 1);
          if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
            out += s[i]! + s[i + 1]!;
            i++;
          } else out += `\\u${c.toString(16).padStart(4, '0')}`;
        } else out += s[i]!;
    }
  }
  return `${out}"`;
}

/** Java's String.hashCode over UTF-16 code units: deterministic across runs and platforms (as Bazel). */
export function hashString(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
  return h;
}
