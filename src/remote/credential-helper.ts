import { spawn } from 'node:child_process';
import { isAbsolute, resolve } from 'node:path';
import { UsageError } from '../core/index.js';
import { parseRemoteHeader } from './request-metadata.js';

/**
 * One `--credential_helper` value: `PATH` (every host) or `SCOPE=PATH`, SCOPE a host name
 * (`remote.example.com`) or a wildcard (`*.example.com`: the domain and all its subdomains).
 */
export interface CredentialHelperSpec {
  readonly scope?: string;
  readonly path: string;
}

const DOMAIN = /^(\*|[-a-zA-Z0-9]+)(\.[-a-zA-Z0-9]+)+$/;

/**
 * Parses `--credential_helper` as Bazel does. The path may start with `%workspace%`; a bare name is
 * looked up on PATH when the helper runs; any other relative path is relative to the workspace.
 * @throws UsageError naming the flag
 */
export function parseCredentialHelperFlag(value: string, workspace: string): CredentialHelperSpec {
  const eq = value.indexOf('=');
  const scope = eq < 0 ? undefined : value.slice(0, eq).toLowerCase();
  const rawPath = eq < 0 ? value : value.slice(eq + 1);
  if (scope !== undefined && !DOMAIN.test(scope)) throw new UsageError(`--credential_helper=${value}: '${scope}' is not a valid (wildcard) DNS name`);
  if (rawPath === '') throw new UsageError(`--credential_helper=${value}: expected a path to the helper`);
  const path = rawPath.startsWith('%workspace%')
    ? resolve(workspace, `.${rawPath.slice('%workspace%'.length)}`)
    : isAbsolute(rawPath) || !rawPath.includes('/')
      ? rawPath
      : resolve(workspace, rawPath);
  return { ...(scope !== undefined ? { scope } : {}), path };
}

/**
 * Bazel's durations: an integer and a unit, `d`, `h`, `m`, `s` or `ms` (`30m`, `10s`).
 * @throws UsageError naming the flag
 */
export function parseDurationFlag(value: string, flag: string): number {
  const m = /^(\d+)(d|h|m|s|ms)$/.exec(value);
  if (!m) throw new UsageError(`--${flag}=${value}: expected a duration such as 30m, 10s or 500ms`);
  const unitMs = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000, ms: 1 }[m[2] as 'd' | 'h' | 'm' | 's' | 'ms'];
  return Number(m[1]) * unitMs;
}

/**
 * The helper for a host, as Bazel picks it: an exact host scope first, then the most specific
 * wildcard (`*.b.example.com` before `*.example.com`; `*.example.com` also covers `example.com`),
 * then a helper without scope. The last flag wins among equal scopes.
 */
export function helperForHost(specs: readonly CredentialHelperSpec[], host: string): CredentialHelperSpec | undefined {
  const h = host.toLowerCase();
  const last = (match: (s: CredentialHelperSpec) => boolean) => specs.filter(match).at(-1);
  const exact = last((s) => s.scope === h);
  if (exact) return exact;
  for (let domain: string | undefined = h; domain; domain = domain.includes('.') ? domain.slice(domain.indexOf('.') + 1) : undefined) {
    const wildcard = last((s) => s.scope === `*.${domain}`);
    if (wildcard) return wildcard;
  }
  return last((s) => s.scope === undefined);
}

/** How helpers run and how long their answers are kept. */
export interface CredentialHelperOptions {
  /** `--credential_helper_cache_duration`: when the helper gives no `expires`. */
  readonly cacheDurationMs: number;
  /** `--credential_helper_timeout`. */
  readonly timeoutMs: number;
  /** The helper's working directory: the workspace, as in Bazel. */
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  readonly now?: () => number;
}

type Headers = readonly (readonly [string, string])[];

/**
 * The headers one credential helper gives for one endpoint, kept as long as its answer is valid.
 * `headers()` is what every call sends; once the answer expires the helper runs again in the
 * background and calls keep the previous headers until it answers (a long build never waits on it).
 */
export class EndpointCredentials {
  private current: Headers = [];
  private expiresAt = 0;
  private refreshing: Promise<void> | undefined;

  private constructor(
    private readonly uri: string,
    private readonly helper: CredentialHelperSpec,
    private readonly options: CredentialHelperOptions,
    private readonly onRefreshFailure: (message: string) => void,
  ) {}

  /**
   * Runs the helper for `uri` once before the first call.
   * @throws UsageError saying what the helper did wrong
   */
  static async fetch(
    uri: string,
    helper: CredentialHelperSpec,
    options: CredentialHelperOptions,
    onRefreshFailure: (message: string) => void,
  ): Promise<EndpointCredentials> {
    const credentials = new EndpointCredentials(uri, helper, options, onRefreshFailure);
    await credentials.refresh();
    return credentials;
  }

  headers(): Headers {
    if ((this.options.now ?? Date.now)() >= this.expiresAt && !this.refreshing) {
      this.refreshing = this.refresh()
        .catch((e: unknown) => this.onRefreshFailure((e as Error).message))
        .finally(() => (this.refreshing = undefined));
    }
    return this.current;
  }

  private async refresh(): Promise<void> {
    const now = (this.options.now ?? Date.now)();
    const answer = await runCredentialHelper(this.helper.path, this.uri, this.options);
    this.current = answer.headers;
    this.expiresAt = answer.expiresAtMs ?? now + this.options.cacheDurationMs;
  }
}

/**
 * Runs `path get` with `{"uri": ...}` on stdin and reads `{"headers": {"Name": ["value", ...]},
 * "expires": "RFC 3339"}` from stdout, as the credential helper protocol says.
 * @throws UsageError naming the helper and the URI
 */
export async function runCredentialHelper(path: string, uri: string, options: CredentialHelperOptions): Promise<{ headers: Headers; expiresAtMs?: number }> {
  const failed = (why: string) => new UsageError(`Failed to get credentials for '${uri}' from helper '${path}': ${why}`);
  const { code, stdout, stderr, timedOut, spawnError } = await new Promise<{
    code: number | null;
    stdout: string;
    stderr: string;
    timedOut: boolean;
    spawnError?: string;
  }>((done) => {
    const child = spawn(path, ['get'], { cwd: options.cwd, env: options.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, options.timeoutMs);
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', (e) => {
      clearTimeout(timer);
      done({ code: null, stdout: out, stderr: err, timedOut, spawnError: (e as NodeJS.ErrnoException).code ?? e.message });
    });
    child.on('close', (exitCode) => {
      clearTimeout(timer);
      done({ code: exitCode, stdout: out, stderr: err, timedOut });
    });
    // A helper that prints fixed credentials may exit without reading its request.
    child.stdin.on('error', () => undefined);
    child.stdin.end(JSON.stringify({ uri }));
  });
  if (spawnError !== undefined) throw failed(`cannot run it (${spawnError})`);
  if (timedOut) throw failed(`process timed out after ${options.timeoutMs} ms`);
  if (code !== 0) throw failed(`process exited with code ${code}. stderr: ${stderr.trim()}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(stdout);
  } catch {
    throw failed(`error parsing output. stderr: ${stderr.trim()}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw failed('expected a JSON object on stdout');
  const { headers: rawHeaders = {}, expires } = parsed as { headers?: unknown; expires?: unknown };
  if (typeof rawHeaders !== 'object' || rawHeaders === null || Array.isArray(rawHeaders)) throw failed('"headers" must be an object of string arrays');
  const headers: [string, string][] = [];
  for (const [name, values] of Object.entries(rawHeaders)) {
    if (!Array.isArray(values) || values.some((v) => typeof v !== 'string')) throw failed(`"headers"."${name}" must be an array of strings`);
    for (const value of values as string[]) {
      const header = parseRemoteHeader(`${name}=${value}`, 'header');
      // The problem without the value, which may be a secret.
      if (typeof header === 'string') throw failed(`header '${name}': ${header.slice(`header=${name}=${value}: `.length)}`);
      headers.push([header[0], header[1]]);
    }
  }
  if (expires === undefined) return { headers };
  const expiresAtMs = typeof expires === 'string' ? Date.parse(expires) : NaN;
  if (Number.isNaN(expiresAtMs)) throw failed(`"expires" must be an RFC 3339 time, got ${JSON.stringify(expires)}`);
  return { headers, expiresAtMs };
}
