/**
 * Starlark's doc string normalisation (Bazel's Starlark.trimDocString): tabs expanded to 8 columns,
 * the first line stripped, the common indentation of the other lines removed, trailing spaces of
 * every line and leading and trailing blank lines dropped.
 */
export function trimDocString(doc: string): string {
  const lines = expandTabs(doc).split(/\r?\n/);
  const rest = lines.slice(1);
  let indent = Number.MAX_SAFE_INTEGER;
  for (const line of rest) {
    const stripped = line.trimStart();
    if (stripped !== '') indent = Math.min(indent, line.length - stripped.length);
  }
  if (indent === Number.MAX_SAFE_INTEGER) indent = 0;
  const out = [lines[0]!.trim(), ...rest.map((line) => (line.length > indent ? line.slice(indent).trimEnd() : ''))];
  while (out.length > 0 && out[0] === '') out.shift();
  while (out.length > 0 && out[out.length - 1] === '') out.pop();
  return out.join('\n');
}

function expandTabs(text: string): string {
  if (!text.includes('\t')) return text;
  return text
    .split('\n')
    .map((line) => {
      let col = 0;
      let s = '';
      for (const c of line) {
        if (c === '\t') {
          const n = 8 - (col % 8);
          s += ' '.repeat(n);
          col += n;
        } else {
          s += c;
          col++;
        }
      }
      return s;
    })
    .join('\n');
}
