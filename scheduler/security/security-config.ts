import { resolve } from 'node:path';
import { fieldPath, readBoolean, readInteger, readNonEmptyString, readObject, readOneOf, type ConfigFail } from '../../src/core/index.js';
import type { TokenEndpointConfig } from './service-account-tokens.js';

/** What a credential may do on an instance (DESIGN.md §3, "Security of the cluster"). */
export const ROLES = ['cache-reader', 'cache-writer', 'executor-client', 'worker', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** The TLS of the server's port: its key pair and, for mutual TLS, the CA that signs client certificates. */
export interface ServerTlsConfig {
  /** PEM certificate chain, reloaded when the file changes. */
  readonly certificate: string;
  /** PEM private key of `certificate`. */
  readonly key: string;
  /** PEM CA bundle client certificates are checked against; absent: clients present none. */
  readonly clientCa?: string;
  /** With `clientCa`: refuse a connection without a valid client certificate (else it may use a token). */
  readonly requireClientCertificate: boolean;
}

/**
 * A role on an instance, given to a principal: `token:NAME` (a line of the token file), `cn:NAME`
 * (a client certificate's subject common name), `dns:NAME` or `uri:URI` (its subject alternative names).
 */
export interface RoleGrant {
  readonly principal: string;
  /** An instance name, or `*` for every instance. */
  readonly instance: string;
  readonly role: Role;
}

/** Off: every call is served, as on a loopback `kiln cluster up`. On: every call is authenticated and authorised. */
export type AuthConfig =
  | { readonly kind: 'off' }
  | {
      readonly kind: 'on';
      /** `SHA256HEX NAME` lines, reloaded when the file changes. */
      readonly tokenFile?: string;
      readonly grants: readonly RoleGrant[];
      /** Service accounts and the endpoint that trades their signed assertions for access tokens. */
      readonly tokenEndpoint?: TokenEndpointConfig;
    };

export interface SecurityConfig {
  readonly tls?: ServerTlsConfig;
  readonly auth: AuthConfig;
}

export const PRINCIPAL_KINDS = ['token', 'cn', 'dns', 'uri'] as const;
export const EVERY_INSTANCE = '*';
/**
 * The principal of a call with no credentials at all. Granted a role (usually `cache-reader`), it lets
 * clients that cannot send credentials on every call read the cache: Bazel 2.1.0 sends no
 * `--remote_header` on ByteStream and GetCapabilities, and has no client-certificate flags.
 */
export const ANONYMOUS = 'anonymous';

/**
 * The `tls` and `auth` sections of the cluster's config:
 * ```json
 * "tls": { "certificate": "server.pem", "key": "server.key", "clientCa": "ca.pem", "requireClientCertificate": false },
 * "auth": { "tokenFile": "tokens.txt",
 *           "roles": { "token:ci": { "*": "cache-writer" }, "cn:executor": { "": ["worker"] }, "anonymous": { "*": "cache-reader" } } }
 * ```
 * Paths are relative to `baseDir`; instance keys must be `*` or one of `instanceNames`.
 */
export function parseSecurityConfig(
  tlsValue: unknown,
  authValue: unknown,
  instanceNames: readonly string[],
  baseDir: string,
  fail: ConfigFail,
): SecurityConfig {
  const tls = tlsValue === undefined ? undefined : parseTls(tlsValue, baseDir, fail);
  if (authValue === undefined) return { ...(tls ? { tls } : {}), auth: { kind: 'off' } };
  const a = readObject(authValue, 'auth', ['tokenFile', 'roles', 'serviceAccounts', 'tokenEndpoint'], fail);
  const tokenFile = a['tokenFile'] === undefined ? undefined : resolve(baseDir, readNonEmptyString(a['tokenFile'], 'auth.tokenFile', fail));
  const tokenEndpoint = parseTokenEndpoint(a['serviceAccounts'], a['tokenEndpoint'], baseDir, fail);
  if (tokenFile === undefined && tls?.clientCa === undefined && tokenEndpoint === undefined) {
    fail('auth', 'needs "tokenFile", "serviceAccounts" or "tls.clientCa": without any, no credential could be checked');
  }
  const grants: RoleGrant[] = [];
  const roles = readObject(a['roles'] ?? {}, 'auth.roles', undefined, fail);
  for (const [principal, perInstance] of Object.entries(roles)) {
    const path = `auth.roles[${JSON.stringify(principal)}]`;
    const kind = principal.slice(0, principal.indexOf(':'));
    if (principal !== ANONYMOUS && (!(PRINCIPAL_KINDS as readonly string[]).includes(kind) || principal.length === kind.length + 1)) {
      fail(path, `expected a principal ${PRINCIPAL_KINDS.map((k) => `"${k}:NAME"`).join(', ')} or "${ANONYMOUS}"`);
    }
    for (const [instance, value] of Object.entries(readObject(perInstance, path, undefined, fail))) {
      const at = `${path}[${JSON.stringify(instance)}]`;
      if (instance !== EVERY_INSTANCE && !instanceNames.includes(instance)) {
        fail(at, `not an instance of this server (${instanceNames.map((n) => JSON.stringify(n)).join(', ')}, or "*" for all)`);
      }
      const list = Array.isArray(value) ? value : [value];
      list.forEach((role, i) => grants.push({ principal, instance, role: readOneOf(role, Array.isArray(value) ? fieldPath(at, i) : at, ROLES, fail) }));
    }
  }
  return { ...(tls ? { tls } : {}), auth: { kind: 'on', ...(tokenFile ? { tokenFile } : {}), grants, ...(tokenEndpoint ? { tokenEndpoint } : {}) } };
}

/**
 * `"serviceAccounts": { "ci": { "email": "ci@kiln.example", "publicKey": "ci.pub.pem" } }` with
 * `"tokenEndpoint": { "host": "0.0.0.0", "port": 8981, "url": "http://sched:8981/token", "plaintext": true }`:
 * both or neither. An access token of account NAME acts as the token NAME (`token:NAME` grants).
 */
function parseTokenEndpoint(accountsValue: unknown, endpointValue: unknown, baseDir: string, fail: ConfigFail): TokenEndpointConfig | undefined {
  if (accountsValue === undefined && endpointValue === undefined) return undefined;
  if (accountsValue === undefined) fail('auth.serviceAccounts', 'needed with "auth.tokenEndpoint": the accounts whose assertions it takes');
  if (endpointValue === undefined) fail('auth.tokenEndpoint', 'needed with "auth.serviceAccounts": where their assertions are traded for tokens');
  const e = readObject(endpointValue, 'auth.tokenEndpoint', ['host', 'port', 'url', 'plaintext'], fail);
  const url = e['url'] === undefined ? undefined : readNonEmptyString(e['url'], 'auth.tokenEndpoint.url', fail);
  if (url !== undefined && !/^https?:\/\/[^/]+\/\S*$/.test(url))
    fail('auth.tokenEndpoint.url', 'expected the http:// or https:// URL clients name as token_uri');
  const accounts = Object.entries(readObject(accountsValue, 'auth.serviceAccounts', undefined, fail)).map(([name, value]) => {
    const at = `auth.serviceAccounts[${JSON.stringify(name)}]`;
    const acc = readObject(value, at, ['email', 'publicKey'], fail);
    return {
      name,
      email: readNonEmptyString(acc['email'], fieldPath(at, 'email'), fail),
      publicKey: resolve(baseDir, readNonEmptyString(acc['publicKey'], fieldPath(at, 'publicKey'), fail)),
    };
  });
  if (accounts.length === 0) fail('auth.serviceAccounts', 'expected at least one account');
  return {
    host: e['host'] === undefined ? '127.0.0.1' : readNonEmptyString(e['host'], 'auth.tokenEndpoint.host', fail),
    port: e['port'] === undefined ? 0 : readInteger(e['port'], 'auth.tokenEndpoint.port', 0, 65535, fail),
    ...(url === undefined ? {} : { url }),
    plaintext: e['plaintext'] === undefined ? false : readBoolean(e['plaintext'], 'auth.tokenEndpoint.plaintext', fail),
    accounts,
  };
}

function parseTls(value: unknown, baseDir: string, fail: ConfigFail): ServerTlsConfig {
  const t = readObject(value, 'tls', ['certificate', 'key', 'clientCa', 'requireClientCertificate'], fail);
  const file = (key: string) => resolve(baseDir, readNonEmptyString(t[key], fieldPath('tls', key), fail));
  const clientCa = t['clientCa'] === undefined ? undefined : file('clientCa');
  const requireClientCertificate =
    t['requireClientCertificate'] === undefined ? false : readBoolean(t['requireClientCertificate'], 'tls.requireClientCertificate', fail);
  if (requireClientCertificate && clientCa === undefined) fail('tls.requireClientCertificate', 'needs "tls.clientCa" to check client certificates against');
  return { certificate: file('certificate'), key: file('key'), ...(clientCa ? { clientCa } : {}), requireClientCertificate };
}
