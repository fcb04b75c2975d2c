import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import type { BuildOptions } from '../analysis/index.js';
import { UsageError } from '../core/index.js';
import type { DownloadMode, RemoteExecutionOptions } from '../exec/index.js';
import type { RemoteEndpoint } from '../remote/index.js';

/**
 * The remote half of a build from Bazel's flags: `--remote_executor`, `--remote_cache` (the
 * executor serves as the cache when only it is given), `--remote_instance_name`, the headers,
 * `--remote_timeout`, `--remote_retries`, `--remote_retry_max_delay`, `--remote_accept_cached`, `--remote_upload_local_results`,
 * `--remote_local_fallback`, `--remote_default_exec_properties`, `--remote_download_outputs` (and
 * its shorthands), the TLS files. Undefined when no
 * remote endpoint is set. The caller closes the client.
 * @throws UsageError naming the flag for a malformed value.
 */
/** `--remote_download_minimal` and `--remote_download_toplevel` are Bazel's shorthands for `--remote_download_outputs`. */
function downloadMode(options: BuildOptions): DownloadMode {
  if (options.getBool('remote_download_minimal')) return 'minimal';
  if (options.getBool('remote_download_toplevel')) return 'toplevel';
  return options.getString('remote_download_outputs') as DownloadMode;
}

export async function remoteExecutionOptions(options: BuildOptions, cwd: string, toolVersion: string): Promise<RemoteExecutionOptions | undefined> {
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
