import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import type { BuildOptions } from '../analysis/index.js';
import { UsageError } from '../core/index.js';
import type { DownloadMode, RemoteExecutionOptions } from '../exec/index.js';
import type { EndpointCredentials, RemoteEndpoint } from '../remote/index.js';

/** `--remote_download_minimal` and `--remote_download_toplevel` are Bazel's shorthands for `--remote_download_outputs`. */
function downloadMode(options: BuildOptions): DownloadMode {
  if (options.getBool('remote_download_minimal')) return 'minimal';
  if (options.getBool('remote_download_toplevel')) return 'toplevel';
  return options.getString('remote_download_outputs') as DownloadMode;
}

/** Where credential helpers run (the workspace, with the client's environment) and where their later failures go. */
export interface CredentialHelperContext {
  readonly workspace: string;
  readonly env: NodeJS.ProcessEnv;
  readonly warn: (message: string) => void;
}

/**
 * The remote half of a build from Bazel's flags: `--remote_executor`, `--remote_cache` (the
 * executor serves as the cache when only it is given), `--remote_instance_name`, the headers,
 * `--remote_timeout`, `--remote_retries`, `--remote_retry_max_delay`, `--remote_accept_cached`, `--remote_upload_local_results`,
 * `--remote_local_fallback`, `--remote_default_exec_properties`, `--remote_download_outputs` (and
 * its shorthands), the TLS files. Undefined when no
 * remote endpoint is set. The caller closes the client.
 * @throws UsageError naming the flag for a malformed value.
 */
export async function remoteExecutionOptions(
  options: BuildOptions,
  cwd: string,
  toolVersion: string,
  helperContext: CredentialHelperContext = { workspace: cwd, env: process.env, warn: () => undefined },
): Promise<RemoteExecutionOptions | undefined> {
  const executorUrl = options.getString('remote_executor');
  const cacheUrl = options.getString('remote_cache');
  const headerFlags = ['remote_header', 'remote_cache_header', 'remote_exec_header'];
  // The remote layer brings the gRPC stack: loaded only when a remote flag is there to read.
  const remote = executorUrl || cacheUrl || headerFlags.some((flag) => options.getList(flag).length > 0) ? await import('../remote/index.js') : undefined;
  const endpoint = (url: string, flag: string): RemoteEndpoint | undefined => (url && remote ? remote.parseRemoteEndpoint(url, flag) : undefined);
  const executor = endpoint(executorUrl, '--remote_executor');
  const cache = endpoint(cacheUrl, '--remote_cache');
  const headers = (flag: string) =>
    options.getList(flag).map((value) => {
      const parsed = remote!.parseRemoteHeader(value, `--${flag}`);
      if (typeof parsed === 'string') throw new UsageError(parsed);
      return parsed;
    });
  // Durations (`60s`, `100ms`, a bare number of seconds), checked by the option parser as Bazel's converter does.
  const timeoutMs = options.getDurationMs('remote_timeout');
  const retryMaxDelayMs = options.getDurationMs('remote_retry_max_delay');
  const retries = options.getInt('remote_retries');
  if (retries < 0) throw new UsageError(`--remote_retries=${retries}: expected 0 or more`);
  const defaultExecProperties: Record<string, string> = {};
  for (const value of options.getList('remote_default_exec_properties')) {
    const eq = value.indexOf('=');
    if (eq <= 0) throw new UsageError(`--remote_default_exec_properties=${value}: expected NAME=VALUE`);
    defaultExecProperties[value.slice(0, eq)] = value.slice(eq + 1);
  }
  const common = headers('remote_header');
  const cacheHeaders = headers('remote_cache_header');
  const execHeaders = headers('remote_exec_header');
  // Every flag is checked even without an endpoint, so a mistake shows before it matters.
  if (!remote || (!executor && !cache)) return undefined;
  const file = (flag: string) => (options.getString(flag) ? resolve(cwd, options.getString(flag)) : undefined);
  const certificate = file('tls_certificate');
  const clientCertificate = file('tls_client_certificate');
  const clientKey = file('tls_client_key');
  const credentialHeaders = await credentialHelperHeaders(remote, options, helperContext, {
    cache: cache ?? executor!,
    ...(executor ? { exec: executor } : {}),
  });
  const invocationId = randomUUID();
  const client = new remote.RemoteClient({
    ...(executor ? { executor } : {}),
    ...(cache ? { cache } : {}),
    instanceName: options.getString('remote_instance_name'),
    headers: { common, cache: cacheHeaders, exec: execHeaders },
    timeoutMs,
    retries,
    retryMaxDelayMs,
    tls: { ...(certificate ? { certificate } : {}), ...(clientCertificate ? { clientCertificate } : {}), ...(clientKey ? { clientKey } : {}) },
    ...(credentialHeaders ? { credentialHeaders } : {}),
    identity: { toolName: 'kiln', toolVersion, invocationId, buildRequestId: invocationId },
    compression: options.getBool('remote_cache_compression'),
  });
  return {
    client,
    acceptCached: options.getBool('remote_accept_cached'),
    uploadLocalResults: options.getBool('remote_upload_local_results'),
    localFallback: options.getBool('remote_local_fallback'),
    defaultExecProperties,
    downloadOutputs: downloadMode(options),
  };
}

type RemoteLayer = typeof import('../remote/index.js');

/**
 * `--credential_helper`: the helper chosen for each endpoint's host is run once before the build
 * (with Bazel's `{"uri": ...}` request) and again when its answer expires.
 * @throws UsageError for a malformed flag or a helper that fails
 */
async function credentialHelperHeaders(
  remote: RemoteLayer,
  options: BuildOptions,
  context: CredentialHelperContext,
  endpoints: { cache: RemoteEndpoint; exec?: RemoteEndpoint },
): Promise<{ cache?: EndpointCredentials; exec?: EndpointCredentials } | undefined> {
  const specs = options.getList('credential_helper').map((v) => remote.parseCredentialHelperFlag(v, context.workspace));
  const helperOptions = {
    cacheDurationMs: remote.parseDurationFlag(options.getString('credential_helper_cache_duration'), 'credential_helper_cache_duration'),
    timeoutMs: remote.parseDurationFlag(options.getString('credential_helper_timeout'), 'credential_helper_timeout'),
    cwd: context.workspace,
    env: context.env,
  };
  if (specs.length === 0) return undefined;
  const fetched = new Map<string, Promise<EndpointCredentials | undefined>>();
  const forEndpoint = (endpoint: RemoteEndpoint): Promise<EndpointCredentials | undefined> => {
    // A Unix socket has no host for a helper to be chosen by (as in Bazel).
    if (!('host' in endpoint.address)) return Promise.resolve(undefined);
    const helper = remote.helperForHost(specs, endpoint.address.host);
    if (!helper) return Promise.resolve(undefined);
    const uri = /^grpcs?:\/\//.test(endpoint.url) ? endpoint.url : `grpcs://${endpoint.url}`;
    if (!fetched.has(uri))
      fetched.set(
        uri,
        remote.EndpointCredentials.fetch(uri, helper, helperOptions, (m) => context.warn(`${m}; the previous credentials stay in use`)),
      );
    return fetched.get(uri)!;
  };
  const [cache, exec] = await Promise.all([forEndpoint(endpoints.cache), endpoints.exec ? forEndpoint(endpoints.exec) : undefined]);
  return { ...(cache ? { cache } : {}), ...(exec ? { exec } : {}) };
}
