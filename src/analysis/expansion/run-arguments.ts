import { expandLocations, ExpansionFailure, type LocationContext } from './location-expander.js';
import { expandMakeVariables, type MakeVariableLookup } from './make-variable-expander.js';

/**
 * `args` and `env` of executable and test rules, as Bazel prepares them: `$(location)` and
 * `$(locations)` name runfiles paths (the program runs in its runfiles tree; `$(execpath)` and
 * `$(rootpath)` keep their meaning), then Make variables; each `args` entry is then split into words
 * as a Bourne shell would (quotes and backslashes), so `$(locations ...)` gives one argument per file.
 * @throws ExpansionFailure with the message the rule reports for the attribute.
 */
export function expandRunArguments(args: readonly string[], locations: LocationContext, variables: MakeVariableLookup): string[] {
  return args.flatMap((arg) => tokenize(expandRunValue(arg, locations, variables)));
}

/** One value (an `env` entry): locations and Make variables, no word splitting. */
export function expandRunValue(text: string, locations: LocationContext, variables: MakeVariableLookup): string {
  // `$$` is an escaped dollar: `$$(location x)` stays as written.
  const runfilesForm = text.replace(/\$\$|\$\((location|locations)(\s)/g, (m, fn: string | undefined, space: string) =>
    fn === undefined ? m : `$(${fn === 'location' ? 'rootpath' : 'rootpaths'}${space}`,
  );
  return expandMakeVariables(expandLocations(runfilesForm, locations), variables);
}

/** Bazel's ShellUtils.tokenize: words split on blanks, with '...', "..." and backslash escapes. */
export function tokenize(text: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else word += c;
    } else if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (c === '\\' && i + 1 < text.length && '"\\$`'.includes(text[i + 1]!)) word += text[++i];
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === '\\') {
      if (i + 1 >= text.length) throw new ExpansionFailure(`unterminated escape in '${text}'`);
      word += text[++i];
      inWord = true;
    } else if (c === ' ' || c === '\t' || c === '\n') {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote) throw new ExpansionFailure(`unterminated quotation in '${text}'`);
  if (inWord) words.push(word);
  return words;
}
