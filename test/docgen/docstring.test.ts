import { describe, expect, it } from 'vitest';
import { parseDocstring, type DocstringError } from '../../src/docgen/docstring.js';
import { escapeText } from '../../src/docgen/text-format.js';
import { trimDocString } from '../../src/docgen/trim-doc-string.js';

describe('trimDocString', () => {
  it.each([
    ['  One line.  ', 'One line.'],
    ['First\n    second\n      third\n    ', 'First\nsecond\n  third'],
    ['\n    Starts on the second line.\n\n    Para.\n', 'Starts on the second line.\n\nPara.'],
    ['Tabs\n\tindented\n\t  more', 'Tabs\nindented\n  more'],
    ['', ''],
  ])('%j -> %j', (doc, want) => expect(trimDocString(doc)).toBe(want));
});

describe('parseDocstring', () => {
  it('splits the sections as Bazel does (continuations dedented to their least indentation)', () => {
    const errors: DocstringError[] = [];
    const doc = parseDocstring(
      'Sum.\n\nMore.\n\nArgs:\n  a: A,\n    continued\n      deeper.\n  *args: Rest.\n\nReturns:\n  R,\n    indented.\n\nDeprecated:\n  D.',
      errors,
    );
    expect(errors).toEqual([]);
    expect(doc.summary).toBe('Sum.');
    expect(doc.description).toBe('More.\n');
    expect([...doc.params]).toEqual([
      ['a', 'A,\ncontinued\n  deeper.'],
      ['*args', 'Rest.'],
    ]);
    expect(doc.returns).toBe('R,\n  indented.');
    expect(doc.deprecated).toBe('D.');
  });

  it('reports every deviation with its line', () => {
    const errors: DocstringError[] = [];
    parseDocstring('Sum\nmore\n\nArgs:\n  not a parameter\nReturns:\n  R\nBody after sections.', errors);
    expect(errors).toEqual([
      { line: 2, message: 'the one-line summary should be followed by a blank line' },
      {
        line: 5,
        message:
          'invalid parameter documentation (expected format: "parameter_name: documentation"). For more details, please have a look at the documentation.',
      },
      { line: 6, message: "end of 'Args' section without blank line" },
      { line: 4, message: 'section is empty or badly formatted' },
      { line: 6, message: 'section should be preceded by a blank line' },
      { line: 8, message: 'end of section without blank line' },
      { line: 8, message: 'description body should go before the special sections' },
    ]);
  });
});

describe('escapeText', () => {
  it('escapes as Java TextFormat does', () => {
    expect(escapeText(Buffer.from('a"b\'c\\d\n\t\u0001é', 'utf8'))).toBe('a\\"b\\\'c\\\\d\\n\\t\\001\\303\\251');
  });
});
