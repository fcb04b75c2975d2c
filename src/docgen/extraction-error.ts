/** Documentation cannot be extracted: a malformed docstring, a misplaced doc comment. */
export class ExtractionError extends Error {
  override name = 'ExtractionError';
}
