/** Characters Bazel's ShellEscaper leaves unquoted. */
const SAFE_WORD = /^[A-Za-z0-9_@%+=:,./-]+$/;

/**
 * Quotes one word for a POSIX shell as Bazel's ShellEscaper does: safe words stay as they are,
 * anything else (the empty word too) goes in single quotes with each `'` written `'\''`.
 */
export function shellQuote(word: string): string {
  return SAFE_WORD.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
