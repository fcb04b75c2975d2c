import * as http2 from 'node:http2';
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect, type SecureContext } from 'node:tls';
import type { RemoteEndpoint } from '../remote-endpoint.js';

/**
 * Flow-control windows we offer the server. Node's defaults (64 KiB per stream and per connection)
 * make a multi-MiB BatchReadBlobs answer wait for a WINDOW_UPDATE every 64 KiB; the responses are
 * bounded by the receive limit anyway.
 */
const STREAM_WINDOW_BYTES = 8 * 1024 * 1024;
const CONNECTION_WINDOW_BYTES = 64 * 1024 * 1024;

/**
 * An HTTP/2 session to `endpoint` as @grpc/grpc-js would dial it: `host:port` (IPv6 literals in
 * brackets) in plain text or, with `secureContext`, TLS with ALPN h2 and the host checked against the
 * certificate; `unix:///path` in plain text. Connection failures arrive as the session's 'error'.
 */
export function openHttp2Session(endpoint: RemoteEndpoint, secureContext: SecureContext | undefined): http2.ClientHttp2Session {
  const address = endpoint.address;
  const socket = (): Socket => {
    if ('path' in address) return netConnect(address.path);
    if (!secureContext) return netConnect({ host: address.host, port: address.port }).setNoDelay(true);
    // A certificate is checked against the host; SNI may only name a host, not an IP address.
    return tlsConnect({
      host: address.host,
      port: address.port,
      secureContext,
      ALPNProtocols: ['h2'],
      ...(isIP(address.host) ? {} : { servername: address.host }),
    }).setNoDelay(true);
  };
  // The target is `host:port` with an IPv6 literal already in brackets.
  const authority = 'path' in address ? 'http://localhost' : `${secureContext ? 'https' : 'http'}://${endpoint.target}`;
  const session = http2.connect(authority, {
    createConnection: socket,
    settings: { initialWindowSize: STREAM_WINDOW_BYTES, enablePush: false },
    // Node's 10 MB default makes it refuse streams while large answers are buffered; the receive limit bounds them.
    maxSessionMemory: Number.MAX_SAFE_INTEGER,
  });
  session.once('connect', () => session.setLocalWindowSize(CONNECTION_WINDOW_BYTES));
  return session;
}
