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
  it('splits the sections', () => {
    const errors: DocstringError[] = [];
    const doc = parseDocstring('Sum.\n\nMore.\n\nArgs:\n  a: A,\n    continued.\n  *args: Rest.\n\nReturns:\n  R.\n\nDeprecated:\n  D.\n\nTrailing.', errors);
    expect(errors).toEqual([]);
    expect(doc.summary).toBe('Sum.');
    expect(doc.description).toBe('More.\n\nTrailing.');
    expect([...doc.params]).toEqual([
      ['a', 'A,\ncontinued.'],
      ['*args', 'Rest.'],
    ]);
    expect(doc.returns).toBe('R.');
    expect(doc.deprecated).toBe('D.');
  });

  it('reports a summary not followed by a blank line and a malformed entry, with their lines', () => {
    const errors: DocstringError[] = [];
    parseDocstring('Sum\nmore\n\nArgs:\n  not a parameter', errors);
    expect(errors).toEqual([
      { line: 2, message: 'the one-line summary should be followed by a blank line' },
      { line: 5, message: 'invalid parameter documentation (expected format: "parameter_name: documentation").' },
    ]);
  });
});

describe('escapeText', () => {
  it('escapes as Java TextFormat does', () => {
    expect(escapeText(Buffer.from('a"b\'c\\d\n\t\u0001é', 'utf8'))).toBe('a\\"b\\\'c\\\\d\\n\\t\\001\\303\\251');
  });
});
