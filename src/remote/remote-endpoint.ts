import { UsageError } from '../core/index.js';

/** A REAPI server as a flag names it, and how @grpc/grpc-js reaches it. */
export interface RemoteEndpoint {
  /** The URL as given (`grpc://127.0.0.1:8980`), for messages. */
  readonly url: string;
  /** The address @grpc/grpc-js dials: `host:port`, or `unix:///path`. */
  readonly target: string;
  /** TLS (`grpcs://`, or no scheme, as in Bazel). */
  readonly secure: boolean;
  /** Where the socket connects: a host (an IPv6 literal without brackets) and port, or a Unix socket's path. */
  readonly address: SocketAddress;
}

export type SocketAddress = { readonly host: string; readonly port: number } | { readonly path: string };

/**
 * Parses `--remote_executor` / `--remote_cache` values as Bazel reads them: `grpc://host:port`
 * (plain text), `grpcs://host:port` or a bare `host:port` (TLS), `unix:///absolute/path` or
 * `unix:path` (plain text over a Unix socket). HTTP caches are not supported.
 * @throws UsageError naming `flag` for anything else.
 */
export function parseRemoteEndpoint(value: string, flag: string): RemoteEndpoint {
  const bad = (why: string) => new UsageError(`${flag}=${value}: ${why}`);
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(value)?.[1]?.toLowerCase();
  if (scheme === 'unix') {
    const path = value.replace(/^unix:(\/\/)?/i, '');
    if (!path.startsWith('/')) throw bad('a unix socket needs an absolute path (unix:///path/to/socket)');
    return { url: value, target: `unix://${path}`, secure: false, address: { path } };
  }
  if (scheme === 'http' || scheme === 'https')
    throw bad('HTTP caches are not supported; give a gRPC endpoint (grpc://host:port, grpcs://host:port or unix:///path)');
  let rest = value;
  let secure = true;
  if (scheme === 'grpc' || scheme === 'grpcs') {
    secure = scheme === 'grpcs';
    rest = value.slice(scheme.length + 1).replace(/^\/\//, '');
  } else if (scheme !== undefined && !/^[^:]+:\d+$/.test(value)) {
    throw bad(`unsupported scheme '${scheme}'; use grpc://, grpcs:// or unix://`);
  }
  rest = rest.replace(/\/+$/, '');
  const m = /^(\[[0-9a-f:.]+\]|[^/:[\]]+)(?::(\d+))?$/i.exec(rest);
  if (!m) throw bad('expected host:port');
  const port = m[2] ?? (secure ? '443' : undefined);
  if (port === undefined) throw bad('a grpc:// endpoint needs a port (grpc://host:port)');
  if (Number(port) < 1 || Number(port) > 65535) throw bad(`port ${port} is out of range`);
  return { url: value, target: `${m[1]}:${port}`, secure, address: { host: m[1]!.replace(/^\[(.*)\]$/, '$1'), port: Number(port) } };
}
