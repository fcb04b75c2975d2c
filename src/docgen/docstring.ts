/** A function's docstring split into Google-style sections, as Bazel's DocstringUtils splits it. */
interface ParsedDocstring {
  /** The first line. */
  readonly summary: string;
  /** The lines outside the sections after the summary's blank line, joined as they are. */
  readonly description: string;
  /** `Args:` entries by name as written (`*args`, `**kwargs` keep their stars). */
  readonly params: ReadonlyMap<string, string>;
  readonly returns: string;
  readonly deprecated: string;
}

export interface DocstringError {
  /** 1-based line within the (trimmed) docstring. */
  readonly line: number;
  readonly message: string;
}

const PARAM_LINE = /^\s*([*\w]+)( \(\s*(.*)\s*\))?: (.*)$/s;

const indentOf = (line: string) => line.length - line.replace(/^ +/, '').length;

/**
 * Parses a docstring already normalised by trimDocString. Every deviation from the format is an
 * error with its line (Bazel's messages): callers refuse to document a function with any.
 */
export function parseDocstring(doc: string, errors: DocstringError[]): ParsedDocstring {
  const lines = doc.split('\n');
  let lineNumber = 0; // 1-based; lines.length + 1 is the end
  let line = '';
  let blankLineBefore = false;
  let sectionsStarted = false;
  const next = (): boolean => {
    if (lineNumber < lines.length) {
      blankLineBefore = line.trim() === '';
      line = lines[lineNumber]!;
      lineNumber++;
      return true;
    }
    line = '';
    lineNumber = lines.length + 1;
    return false;
  };
  const eof = () => lineNumber > lines.length;
  const error = (message: string, at = lineNumber) => errors.push({ line: at, message });
  const nonStandardDeprecation = (l: string): string => {
    if (!l.toLowerCase().startsWith('deprecated:') && !l.includes('DEPRECATED')) return '';
    error(
      "use a 'Deprecated:' section for deprecations, similar to a 'Returns:' section:\n\nDeprecated:\n  <reason and alternative>\n\nFor more details, please have a look at the documentation.",
    );
    return l;
  };
  const sectionStart = (duplicate: boolean) => {
    sectionsStarted = true;
    if (!blankLineBefore) error('section should be preceded by a blank line');
    if (duplicate) error(`duplicate '${line}' section`);
  };
  const sectionAfterHeading = (): string => {
    const heading = lineNumber;
    next();
    const contents: string[] = [];
    while (!eof()) {
      let text = line;
      if (line !== '') {
        if (indentOf(line) === 0) {
          if (!blankLineBefore) error('end of section without blank line');
          break;
        }
        if (indentOf(line) < 2) {
          error('text in a section has to be indented by two spaces (relative to the left margin of the docstring)');
          text = line.slice(indentOf(line));
        } else text = line.slice(2);
      }
      contents.push(text);
      next();
    }
    const result = contents.join('\n').trim();
    if (result === '') error('section is empty', heading);
    return result;
  };
  const parameters = (params: Map<string, string>) => {
    const heading = lineNumber;
    next();
    const before = params.size;
    let expectedIndent = -1;
    while (!eof()) {
      if (line === '') {
        next();
        continue;
      }
      const indent = indentOf(line);
      if (indent === 0) {
        if (!blankLineBefore) error("end of 'Args' section without blank line");
        break;
      }
      if (expectedIndent === -1) expectedIndent = indent;
      if (expectedIndent !== indent) error(`inconsistent indentation of parameter lines (before: ${expectedIndent}; here: ${indent} spaces)`);
      const paramLine = lineNumber;
      const m = PARAM_LINE.exec(line.slice(indent));
      if (!m) {
        error('invalid parameter documentation (expected format: "parameter_name: documentation"). For more details, please have a look at the documentation.');
        next();
        continue;
      }
      // Continuation lines: indented deeper than the entry, dedented to the least of them.
      const buffer: string[] = [];
      let continuationIndent = Number.MAX_SAFE_INTEGER;
      while (next()) {
        if (line !== '') {
          if (indentOf(line) <= indent) break;
          continuationIndent = Math.min(continuationIndent, indentOf(line));
        }
        buffer.push(line);
      }
      const description = [m[4]!, ...buffer.map((b) => (b === '' ? '' : b.slice(continuationIndent)))].join('\n').trim();
      if (description === '') error(`empty parameter description for '${m[1]}'`, paramLine);
      params.set(m[1]!, description);
    }
    if (params.size === before) error('section is empty or badly formatted', heading);
  };

  next();
  const summary = line;
  let deprecatedByConvention = nonStandardDeprecation(line);
  const params = new Map<string, string>();
  if (!next()) return { summary, description: '', params, returns: '', deprecated: deprecatedByConvention };
  if (line !== '') error('the one-line summary should be followed by a blank line');
  else next();
  const description: string[] = [];
  let returns = '';
  let deprecated = '';
  let reportedBodyAfterSections = false;
  while (!eof()) {
    if (line === 'Args:' || line === 'Arguments:') {
      sectionStart(params.size > 0);
      if (returns !== '') error("'Args:' section should go before the 'Returns:' section");
      if (deprecated !== '') error("'Args:' section should go before the 'Deprecated:' section");
      parameters(params);
    } else if (line === 'Returns:') {
      sectionStart(returns !== '');
      if (deprecated !== '') error("'Returns:' section should go before the 'Deprecated:' section");
      returns = sectionAfterHeading();
    } else if (line === 'Deprecated:') {
      sectionStart(deprecated !== '');
      deprecated = sectionAfterHeading();
    } else {
      if (sectionsStarted && !reportedBodyAfterSections) {
        error('description body should go before the special sections');
        reportedBodyAfterSections = true;
      }
      if (deprecated === '' && deprecatedByConvention === '') deprecatedByConvention = nonStandardDeprecation(line);
      if (line.startsWith('Returns: ')) {
        error(
          'the return value should be documented in a section, like this:\n\nReturns:\n  <documentation here>\n\nFor more details, please have a look at the documentation.',
        );
      }
      description.push(line);
      next();
    }
  }
  return { summary, description: description.join('\n'), params, returns, deprecated: deprecated || deprecatedByConvention };
}
