import { createHash, createPublicKey, generateKeyPairSync, randomBytes, verify, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { InvalidArgumentError } from '../../src/core/index.js';
import type { ServerLog } from '../service-context.js';

/**
 * A service account: a name (its access tokens act as the token of that name, so `token:NAME` grants
 * apply), the `client_email` its key file names, and the public half of its key.
 */
export interface ServiceAccountConfig {
  readonly name: string;
  readonly email: string;
  /** PEM public key (or certificate) whose private key signs the account's assertions. */
  readonly publicKey: string;
}

/** Where the token endpoint listens, and the URL clients put as `token_uri` (the assertions' audience). */
export interface TokenEndpointConfig {
  readonly host: string;
  readonly port: number;
  /** Default: `http(s)://HOST:PORT/token` as it listens (a proxy in front names its own). */
  readonly url?: string;
  /** Serve plain HTTP even when the server has TLS (a JVM client trusts only its own CA store). */
  readonly plaintext: boolean;
  readonly accounts: readonly ServiceAccountConfig[];
}

/** How long an access token lives (Google's default, which Bazel's client refreshes before). */
const TOKEN_LIFETIME_S = 3600;
/** Clock skew tolerated on an assertion's times. */
const SKEW_S = 60;
/** The largest request body the endpoint reads (an assertion is about 1 KB). */
const MAX_BODY_BYTES = 64 << 10;
/** Access tokens alive at once, per account: a client that asks in a loop cannot grow the table without bound. */
const MAX_TOKENS_PER_ACCOUNT = 1024;

/**
 * Access tokens the endpoint issued: looked up by their SHA-256, each with its account's name and
 * expiry. A lookup of an expired token forgets it.
 */
export class IssuedTokens {
  private readonly byHash = new Map<string, { readonly name: string; readonly expiresAt: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  issue(name: string): { token: string; expiresIn: number } {
    this.sweep(name);
    const token = randomBytes(32).toString('base64url');
    this.byHash.set(hashOf(token), { name, expiresAt: this.now() + TOKEN_LIFETIME_S * 1000 });
    return { token, expiresIn: TOKEN_LIFETIME_S };
  }

  /** The account a live token was issued to, or undefined. */
  nameOf(token: string): string | undefined {
    const h = hashOf(token);
    const entry = this.byHash.get(h);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.byHash.delete(h);
      return undefined;
    }
    return entry.name;
  }

  private sweep(name: string): void {
    let live = 0;
    for (const [h, e] of this.byHash) {
      if (e.expiresAt <= this.now()) this.byHash.delete(h);
      else if (e.name === name) live++;
    }
    if (live < MAX_TOKENS_PER_ACCOUNT) return;
    // The oldest of the account's tokens goes first (Map order is insertion order).
    for (const [h, e] of this.byHash) {
      if (e.name !== name) continue;
      this.byHash.delete(h);
      break;
    }
  }
}

function hashOf(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Why an assertion is refused (RFC 6749's `invalid_grant`), in words for the log and the client. */
class InvalidGrant extends Error {}

/**
 * Checks an RFC 7523 assertion (a JWT signed RS256 with a service account's key, as Google's
 * credential libraries and so Bazel's `--google_credentials` make it): the signature under the key
 * of the account its `iss` names, `aud` the endpoint's URL, `iat`/`exp` now (at most an hour apart).
 * @returns the account's name
 */
export function verifyAssertion(assertion: string, accounts: ReadonlyMap<string, { name: string; key: KeyObject }>, audience: string, nowS: number): string {
  const parts = assertion.split('.');
  if (parts.length !== 3) throw new InvalidGrant('the assertion is not a JWT');
  const [head, body, signature] = parts as [string, string, string];
  const json = (part: string, what: string) => {
    try {
      const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
      if (typeof value === 'object' && value !== null) return value as Record<string, unknown>;
    } catch {
      // refused below
    }
    throw new InvalidGrant(`the assertion's ${what} is not a JSON object`);
  };
  const header = json(head, 'header');
  const claims = json(body, 'claims');
  if (header['alg'] !== 'RS256') throw new InvalidGrant(`unsupported signature algorithm ${JSON.stringify(header['alg'])} (RS256 only)`);
  const account = typeof claims['iss'] === 'string' ? accounts.get(claims['iss']) : undefined;
  // Same words for an unknown account and a bad signature: a refusal says nothing about which accounts exist.
  if (!account || !verify('sha256', Buffer.from(`${head}.${body}`), account.key, Buffer.from(signature, 'base64url'))) {
    throw new InvalidGrant('the assertion is not signed by a known service account');
  }
  if (claims['aud'] !== audience) throw new InvalidGrant(`the assertion's audience is not ${audience}`);
  const iat = claims['iat'];
  const exp = claims['exp'];
  if (typeof iat !== 'number' || typeof exp !== 'number') throw new InvalidGrant('the assertion has no iat and exp');
  if (iat > nowS + SKEW_S || exp <= nowS - SKEW_S) throw new InvalidGrant('the assertion is not valid now');
  if (exp - iat > TOKEN_LIFETIME_S) throw new InvalidGrant('the assertion is valid for more than an hour');
  return account.name;
}

/** The running endpoint. */
export interface TokenEndpoint {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/**
 * The OAuth 2.0 token endpoint of the cluster: `POST` with `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer`
 * and a service account's signed `assertion` gives an access token (`token_type: Bearer`, an hour)
 * that the cluster's ports take as the token of that account's name. It is what Bazel's
 * `--google_credentials=FILE` speaks (the key file's `token_uri` names this endpoint), and so the way
 * a client that sends no `--remote_header` on every call (Bazel 2.1.0: not on ByteStream) still
 * authenticates every call: its gRPC stack attaches the token to all of them.
 */
export async function openTokenEndpoint(
  config: TokenEndpointConfig,
  issued: IssuedTokens,
  tls: { readonly certificate: string; readonly key: string } | undefined,
  log: ServerLog,
): Promise<TokenEndpoint> {
  const accounts = new Map<string, { name: string; key: KeyObject }>();
  for (const a of config.accounts) {
    let key: KeyObject;
    try {
      key = createPublicKey(await readFile(a.publicKey));
    } catch (e) {
      throw new InvalidArgumentError(
        `auth.serviceAccounts[${JSON.stringify(a.name)}].publicKey: cannot read a public key from ${a.publicKey} (${(e as Error).message})`,
      );
    }
    accounts.set(a.email, { name: a.name, key });
  }
  const secure = tls !== undefined && !config.plaintext;
  let url = config.url ?? '';
  const handle = (req: IncomingMessage, res: ServerResponse) => void answer(req, res, accounts, url, issued, log);
  const server: Server = secure ? createHttpsServer({ cert: await readFile(tls.certificate), key: await readFile(tls.key) }, handle) : createServer(handle);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  url = config.url ?? `${secure ? 'https' : 'http'}://${host}:${port}/token`;
  return {
    url,
    port,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

async function answer(
  req: IncomingMessage,
  res: ServerResponse,
  accounts: ReadonlyMap<string, { name: string; key: KeyObject }>,
  audience: string,
  issued: IssuedTokens,
  log: ServerLog,
): Promise<void> {
  const reply = (status: number, body: object) => {
    res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(JSON.stringify(body));
  };
  if (req.method !== 'POST') return reply(405, { error: 'invalid_request', error_description: 'POST the assertion' });
  let body = '';
  let size = 0;
  try {
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > MAX_BODY_BYTES) return reply(413, { error: 'invalid_request', error_description: 'request too large' });
      body += (chunk as Buffer).toString('utf8');
    }
  } catch {
    return; // the client went away
  }
  const form = new URLSearchParams(body);
  if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') {
    return reply(400, { error: 'unsupported_grant_type', error_description: 'only urn:ietf:params:oauth:grant-type:jwt-bearer' });
  }
  try {
    const name = verifyAssertion(form.get('assertion') ?? '', accounts, audience, Math.floor(Date.now() / 1000));
    const { token, expiresIn } = issued.issue(name);
    return reply(200, { access_token: token, token_type: 'Bearer', expires_in: expiresIn });
  } catch (e) {
    // Called without await: an unexpected error is answered here, never left to crash the server.
    if (!(e instanceof InvalidGrant)) {
      log.warn(`token endpoint: ${(e as Error).message}`);
      return reply(500, { error: 'server_error' });
    }
    log.warn(`token endpoint: refused an assertion: ${e.message}`);
    return reply(400, { error: 'invalid_grant', error_description: e.message });
  }
}

/**
 * A new service account: its key file, as Google's credential libraries read it (`type:
 * service_account`, the private key, `client_email`, `token_uri`: Bazel's `--google_credentials`), and
 * the public key the cluster's config names. The private key exists only in the key file.
 */
export function newServiceAccount(name: string, email: string, tokenUri: string): { keyFile: string; publicKeyPem: string } {
  if (!/^[A-Za-z0-9._-]+$/.test(name)) throw new InvalidArgumentError(`service account name ${JSON.stringify(name)}: letters, digits, '.', '_' and '-' only`);
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keyFile = {
    type: 'service_account',
    project_id: 'kiln',
    private_key_id: randomBytes(8).toString('hex'),
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    client_email: email,
    client_id: name,
    token_uri: tokenUri,
  };
  return { keyFile: `${JSON.stringify(keyFile, null, 2)}\n`, publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
}
