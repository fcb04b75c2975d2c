import type { PlainAttrValue } from '../../loading/index.js';
import { compileRegexp, expressionArg, wordArg, type QueryFunction } from './query-function.js';

/**
 * `attr(name, pattern, x)`: the rules of x having attribute `name` with a value (any select branch,
 * or the default) the regexp matches. Values read as Bazel prints them: lists `[a, b]`, dicts
 * `{k=v}`, booleans `0`/`1`, labels in canonical form.
 */
export const attrFunction: QueryFunction = {
  name: 'attr',
  argumentTypes: ['word', 'word', 'expression'],
  mandatoryArguments: 3,
  evaluate: (ctx, args) => {
    const name = wordArg(args, 0);
    const re = compileRegexp('attr', wordArg(args, 1));
    const out = expressionArg(ctx, args, 2);
    for (const [k, t] of out) {
      const a = ctx.env.isRule(t) ? ctx.env.attribute(t, name) : undefined;
      if (!a?.values.some((v) => re.test(attributeString(v)))) out.delete(k);
    }
    return out;
  },
};

/** An attribute value as text, in the form Bazel's attr() matches against. */
function attributeString(v: PlainAttrValue): string {
  if (v === null) return '';
  if (typeof v === 'boolean') return v ? '1' : '0';
  if (typeof v === 'string' || typeof v === 'number') return String(v);
  const entries = v as readonly unknown[];
  if (entries.length > 0 && Array.isArray(entries[0])) {
    return `{${(entries as [string, PlainAttrValue][]).map(([key, x]) => `${key}=${attributeString(x)}`).join(', ')}}`;
  }
  return `[${(entries as string[]).join(', ')}]`;
}
