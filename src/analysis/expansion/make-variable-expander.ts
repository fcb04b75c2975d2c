import { ExpansionFailure } from './location-expander.js';

/**
 * Answers one Make variable: its value, or undefined when the variable does not exist
 * (the expander then reports Bazel's `$(NAME) not defined`). A lookup may throw an
 * {@link ExpansionFailure} of its own for a variable that exists but cannot be used here
 * (`$<` with two srcs).
 */
export type MakeVariableLookup = (name: string) => string | undefined;

/**
 * Bazel's Make-variable syntax: `$$` is a dollar sign, `$(NAME)` a variable, `$X` the
 * one-character variable X (so `$<`, `$@`, and also `$H` of an unescaped `$HOME`, which is
 * then not defined), `$(fn arg)` a function (none is left after location substitution: `$(fn)
 * not defined`). As Bazel's TemplateExpander, a variable's value is expanded in turn (a file
 * named `a$(touch X).txt` in `$(SRCS)` is `$(touch) not defined`, never a command), at most ten
 * levels deep.
 */
export function expandMakeVariables(text: string, lookup: MakeVariableLookup, depth = 0): string {
  if (depth > 10) throw new ExpansionFailure(`potentially unbounded recursion during expansion of '${text}'`);
  let out = '';
  let i = 0;
  while (i < text.length) {
    const dollar = text.indexOf('$', i);
    if (dollar < 0) {
      out += text.slice(i);
      break;
    }
    out += text.slice(i, dollar);
    if (dollar === text.length - 1) throw new ExpansionFailure('unterminated $');
    const next = text[dollar + 1]!;
    if (next === '$') {
      out += '$';
      i = dollar + 2;
      continue;
    }
    let name: string;
    if (next === '(') {
      const close = text.indexOf(')', dollar + 2);
      if (close < 0) throw new ExpansionFailure('unterminated variable reference');
      name = text.slice(dollar + 2, close);
      i = close + 1;
    } else {
      name = next;
      i = dollar + 2;
    }
    const space = name.indexOf(' ');
    if (space >= 0) throw new ExpansionFailure(`$(${name.slice(0, space)}) not defined`);
    const value = lookup(name);
    if (value === undefined) throw new ExpansionFailure(`$(${name}) not defined`);
    out += value.includes('$') ? expandMakeVariables(value, lookup, depth + 1) : value;
  }
  return out;
}
