import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { InvalidArgumentError } from '../../src/core/index.js';
import type { ServerLog } from '../service-context.js';
import { watchFiles } from './file-watch.js';

/** One line of a token file: the SHA-256 of a token and the name its holder is known by. */
export interface TokenEntry {
  readonly sha256: Buffer;
  readonly name: string;
}

const LINE = /^([0-9a-f]{64})\s+([A-Za-z0-9._@-]+)$/;
const NAME = /^[A-Za-z0-9._@-]+$/;

/**
 * Parses a token file: `SHA256HEX NAME` per line (`#` comments and blank lines allowed). Several
 * tokens may share a name (a team's tokens, each revoked on its own). The file holds only hashes, so
 * reading it gives away no token.
 * @throws InvalidArgumentError naming `file:line`
 */
export function parseTokenFile(text: string, file: string): TokenEntry[] {
  const entries: TokenEntry[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const m = LINE.exec(line);
    if (!m) throw new InvalidArgumentError(`${file}:${i + 1}: expected "SHA256HEX NAME" (64 lower-case hex digits, then a name of letters, digits, ._@-)`);
    entries.push({ sha256: Buffer.from(m[1]!, 'hex'), name: m[2]! });
  });
  return entries;
}

/** A fresh random token (256 bits) and its token file line. */
export function newToken(name: string): { token: string; line: string } {
  if (!NAME.test(name)) throw new InvalidArgumentError(`token name '${name}': expected letters, digits and ._@-`);
  const token = randomBytes(32).toString('base64url');
  return { token, line: `${tokenSha256(token).toString('hex')} ${name}` };
}

/** The SHA-256 of a token, as a token file stores it. */
export function tokenSha256(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/**
 * The bearer tokens of a token file, read again when it changes. Lookups compare the presented
 * token's hash with every entry in constant time (no early exit), so timing says nothing about which
 * hashes are stored. A reload that fails to parse keeps the previous tokens and is logged.
 */
export class BearerTokens {
  private readonly stopWatching: () => void;

  private constructor(
    private readonly file: string,
    private entries: readonly TokenEntry[],
    private readonly log: ServerLog,
    /** Tokens the server made itself (its own executors'), kept across reloads. */
    private readonly internal: readonly TokenEntry[],
    /** Access tokens the token endpoint issued to service accounts. */
    private readonly issued?: { nameOf(token: string): string | undefined },
  ) {
    this.stopWatching = file === '' ? () => undefined : watchFiles([file], () => void this.reload());
  }

  /** @param file '' for no file (only `internal` tokens) */
  static async open(
    file: string,
    log: ServerLog,
    internal: readonly TokenEntry[] = [],
    issued?: { nameOf(token: string): string | undefined },
  ): Promise<BearerTokens> {
    return new BearerTokens(file, file === '' ? [] : await readTokenFile(file), log, internal, issued);
  }

  /** The name of the token's holder, or undefined for a token that is not in the file. */
  nameOf(token: string): string | undefined {
    const presented = tokenSha256(token);
    let name: string | undefined;
    for (const entry of [...this.internal, ...this.entries]) {
      if (timingSafeEqual(entry.sha256, presented) && name === undefined) name = entry.name;
    }
    return name ?? this.issued?.nameOf(token);
  }

  /** @returns whether the file was read (it may not have changed) */
  async reload(): Promise<boolean> {
    try {
      this.entries = await readTokenFile(this.file);
      return true;
    } catch (e) {
      this.log.warn(`token file not reloaded, the previous tokens stay in use: ${(e as Error).message}`);
      return false;
    }
  }

  close(): void {
    this.stopWatching();
  }
}

async function readTokenFile(file: string): Promise<TokenEntry[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new InvalidArgumentError(`auth.tokenFile: cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  return parseTokenFile(text, file);
}
