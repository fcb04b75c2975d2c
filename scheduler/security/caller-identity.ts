import type * as grpc from '@grpc/grpc-js';
import type { PeerCertificate } from 'node:tls';
import { ANONYMOUS } from './security-config.js';
import type { BearerTokens } from './token-file.js';

/** Who a call comes from: its principals (`token:NAME`, `cn:NAME`, `dns:NAME`, `uri:URI`, or `anonymous` where that has a role), or why it is not authenticated. */
export type CallerIdentity = { readonly principals: readonly string[] } | { readonly unauthenticated: string };

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * The principals of a call: the holder of each `authorization: Bearer` token (as Bazel sends with
 * `--remote_header=authorization=Bearer ...` or a credential helper) and the names of the client
 * certificate, which grpc-js reports only when it was verified against the configured CA. A token
 * that is not in the file fails the call even beside a valid certificate: a credential that does not
 * check out is an error, never ignored.
 */
export function identifyCaller(
  metadata: grpc.Metadata,
  authContext: { sslPeerCertificate?: PeerCertificate },
  tokens: BearerTokens | undefined,
  admitsAnonymous = false,
): CallerIdentity {
  const principals: string[] = [];
  for (const value of metadata.get('authorization')) {
    const m = BEARER.exec(String(value));
    if (!m) return { unauthenticated: 'the authorization header is not "Bearer TOKEN"' };
    const name = tokens?.nameOf(m[1]!);
    if (name === undefined) return { unauthenticated: 'the bearer token is not valid' };
    principals.push(`token:${name}`);
  }
  const certificate = authContext.sslPeerCertificate;
  if (certificate) principals.push(...certificatePrincipals(certificate));
  if (principals.length === 0 && admitsAnonymous) return { principals: [ANONYMOUS] };
  if (principals.length === 0) return { unauthenticated: 'no credentials: send "authorization: Bearer TOKEN" or a client certificate' };
  return { principals };
}

/** `cn:` of each subject common name, `dns:` and `uri:` of each subject alternative name. */
export function certificatePrincipals(certificate: PeerCertificate): string[] {
  const cn = certificate.subject?.CN as string | string[] | undefined;
  const out = (cn === undefined ? [] : Array.isArray(cn) ? cn : [cn]).map((name) => `cn:${name}`);
  // Node's form: `DNS:a.example, URI:spiffe://x, IP Address:127.0.0.1`.
  for (const entry of (certificate.subjectaltname ?? '').split(', ')) {
    const m = /^(DNS|URI):(.+)$/.exec(entry);
    if (m) out.push(`${m[1]!.toLowerCase()}:${m[2]}`);
  }
  return out;
}
