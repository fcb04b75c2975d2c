import { gzipSync } from 'node:zlib';
import type { Action } from '../../actions/index.js';
import { isKilnError } from '../../core/index.js';
import { evaluateGenquery, ScopeViolationError } from '../../query/index.js';
import type { RuleContext } from '../configured/rule-context.js';
import { targetNameOf } from '../configured/target-paths.js';
import type { RuleResult } from './rule-result.js';

/** Results above this size are kept gzip-compressed in memory (in the action) whatever compressed_output says. */
export const GENQUERY_COMPRESSION_THRESHOLD = 1 << 20;

/**
 * genquery (spec, genquery): runs `expression` over the transitive closure of `scope` during
 * analysis and registers one action writing the result to a file named after the rule, so the
 * result is an ordinary action output (keyed by its content, cached and rebuilt like any other).
 * Bad opts, a wildcard, a syntax error or a missing target fail analysis; a strict query leaving
 * its scope registers an action that fails with the reason (the target fails during execution);
 * with strict = False the out-of-scope part is skipped with a warning.
 */
export function analyzeGenquery(ctx: RuleContext): RuleResult {
  const label = ctx.target.label;
  const loader = ctx.packageLoader;
  if (!loader) throw ctx.error(undefined, 'genquery needs the package loader; this analysis was started without one');
  const expression = ctx.attr<string>('expression', '', false);
  const scope = ctx.attr<readonly string[]>('scope', [], false).map((raw) => {
    const l = ctx.canonicalize(raw);
    if (l === undefined) throw ctx.error('scope', `invalid label '${raw}'`);
    return l;
  });
  const strict = ctx.attr<boolean>('strict', true, false);
  const compressed = ctx.attr<boolean>('compressed_output', false, false);
  const opts = ctx.attr<readonly string[]>('opts', [], false);
  const out = ctx.outputFile(targetNameOf(label), true);
  const base = { owner: label, location: ctx.target.location, mnemonic: 'GenQuery', progressMessage: `Executing genquery ${label}`, env: {}, inputs: [], outputs: [out.artifact as Action['outputs'][number]], executionRequirements: [], executableOutputs: false };

  let content: Uint8Array;
  try {
    content = evaluateGenquery({ loader, rule: label, expression, scope, strict, opts, warn: (m) => ctx.warn(`in genquery rule ${label}: ${m}`) }).output;
  } catch (e) {
    if (e instanceof ScopeViolationError) {
      const message = `in genquery rule ${label}: ${e.message}`;
      return { files: [out], runfiles: [], actions: [{ ...base, argv: ['/bin/sh', '-c', `printf '%s\\n' ${shellQuote(`ERROR: ${message}`)} >&2; exit 1`] }] };
    }
    if (isKilnError(e)) throw ctx.error(e.message.startsWith('option') || e.message.includes('opts') ? 'opts' : 'expression', e.message);
    throw e;
  }
  const bytes = compressed ? gzipSync(content) : content;
  return { files: [out], runfiles: [], actions: [{ ...base, argv: ['/bin/sh', '-c', genqueryWriteCommand(bytes, out.artifact.execPath, compressed)] }] };
}

/**
 * A shell command writing `bytes` to `path` (relative to the execroot, where actions run): text as a
 * quoted here-document, other bytes through printf's octal escapes; a result above the threshold is
 * held gzip-compressed in the command (and so in memory) and decompressed by `gzip -dc` when it runs,
 * unless compressed_output already made it gzip.
 */
export function genqueryWriteCommand(bytes: Uint8Array, path: string, alreadyCompressed: boolean): string {
  const target = shellQuote(path);
  if (bytes.length === 0) return `: > ${target}`;
  if (bytes.length > GENQUERY_COMPRESSION_THRESHOLD && !alreadyCompressed) return `printf '${octalEscaped(gzipSync(bytes))}' | gzip -dc > ${target}`;
  const text = Buffer.from(bytes).toString('utf8');
  if (!alreadyCompressed && text.endsWith('\n') && !text.includes('\0') && Buffer.byteLength(text) === bytes.length) {
    let delimiter = 'KILN_GENQUERY_EOF';
    while (text.includes(delimiter)) delimiter += '_';
    return `cat > ${target} <<'${delimiter}'\n${text}${delimiter}\n`;
  }
  return `printf '${octalEscaped(bytes)}' > ${target}`;
}

/**
 * Bytes as a printf format inside single quotes: printable ASCII as is, everything else `\ooo`. A
 * leading `-` is escaped too, or printf would read the format as an option.
 */
function octalEscaped(bytes: Uint8Array): string {
  let out = '';
  for (const [i, b] of bytes.entries()) {
    const printable = b >= 0x20 && b <= 0x7e && b !== 0x27 /* ' */ && b !== 0x5c /* \ */ && b !== 0x25 /* % */ && !(i === 0 && b === 0x2d); /* - */
    out += printable ? String.fromCharCode(b) : `\\${b.toString(8).padStart(3, '0')}`;
  }
  return out;
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
