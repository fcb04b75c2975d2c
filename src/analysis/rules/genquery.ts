import { gzipSync } from 'node:zlib';
import { inProcessAction, type DerivedArtifact, type InProcessWork } from '../../actions/index.js';
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
  const write = (work: InProcessWork) =>
    inProcessAction({
      owner: label,
      location: ctx.target.location,
      mnemonic: 'GenQuery',
      progressMessage: `Executing genquery ${label}`,
      output: out.artifact as DerivedArtifact,
      work,
    });

  let content: Uint8Array;
  try {
    content = evaluateGenquery({ loader, rule: label, expression, scope, strict, opts, warn: (m) => ctx.warn(`in genquery rule ${label}: ${m}`) }).output;
  } catch (e) {
    // Bazel reports a strict query leaving its scope when the action runs: analysis goes on.
    if (e instanceof ScopeViolationError)
      return { files: [out], runfiles: [], actions: [write({ kind: 'fail', message: `in genquery rule ${label}: ${e.message}` })] };
    if (isKilnError(e)) throw ctx.error(e.message.startsWith('option') || e.message.includes('opts') ? 'opts' : 'expression', e.message);
    throw e;
  }
  return { files: [out], runfiles: [], actions: [write(genqueryWrite(content, compressed))] };
}

/**
 * What genquery's action writes: the result, gzip-compressed when `compressed_output` asks; a result
 * above the threshold is held gzip-compressed in the action (and so in memory and in the analysis
 * cache) and decompressed when it runs.
 */
export function genqueryWrite(content: Uint8Array, compressedOutput: boolean): InProcessWork {
  if (compressedOutput) return { kind: 'write_binary', base64: gzipSync(content).toString('base64') };
  if (content.length > GENQUERY_COMPRESSION_THRESHOLD) return { kind: 'write_binary', base64: gzipSync(content).toString('base64'), gunzip: true };
  return { kind: 'write_binary', base64: Buffer.from(content).toString('base64') };
}
