import * as grpc from '@grpc/grpc-js';
import type { ServerLog } from '../service-context.js';
import { authorizationInterceptor } from './authorization-interceptor.js';
import { RoleGrants } from './role-grants.js';
import { EVERY_INSTANCE, type SecurityConfig } from './security-config.js';
import { ReloadingServerTls } from './server-tls.js';
import { IssuedTokens, openTokenEndpoint, type TokenEndpoint } from './service-account-tokens.js';
import { BearerTokens, tokenSha256 } from './token-file.js';

/** A name no token file line can have: the cluster's own executors, when `kiln cluster up` starts them. */
export const CLUSTER_EXECUTORS = '<cluster-executors>';

/** How the port is secured: its credentials, the interceptor that checks every call, and reload hooks. */
export interface PortSecurity {
  readonly scheme: 'grpc' | 'grpcs';
  readonly credentials: grpc.ServerCredentials;
  readonly interceptors: grpc.ServerInterceptor[];
  /** Reads the certificate files again (they are also watched); false when nothing new is served. */
  reloadTls(): Promise<boolean>;
  /** Reads the token file again (it is also watched). */
  reloadTokens(): Promise<boolean>;
  /** The service accounts' token endpoint, when configured. */
  readonly tokenEndpoint?: TokenEndpoint;
  /** With auth on: the tokens and grants calls are checked against, which the web UI checks its requests against too. */
  readonly auth?: { readonly tokens: BearerTokens; readonly grants: RoleGrants };
  close(): void;
}

/**
 * Opens the TLS files and the token file of `config`. `clusterExecutorToken`: a token the server
 * itself gave its in-process executors, holding the worker role on every instance.
 * @throws InvalidArgumentError naming the field whose file is unreadable or invalid
 */
export async function openPortSecurity(config: SecurityConfig, log: ServerLog, clusterExecutorToken?: string): Promise<PortSecurity> {
  const tls = config.tls ? await ReloadingServerTls.open(config.tls, log) : undefined;
  let tokens: BearerTokens | undefined;
  const interceptors: grpc.ServerInterceptor[] = [];
  let tokenEndpoint: TokenEndpoint | undefined;
  let auth: PortSecurity['auth'];
  if (config.auth.kind === 'on') {
    const internal = clusterExecutorToken ? [{ sha256: tokenSha256(clusterExecutorToken), name: CLUSTER_EXECUTORS }] : [];
    const endpointConfig = config.auth.tokenEndpoint;
    const issued = endpointConfig ? new IssuedTokens() : undefined;
    try {
      tokens = await BearerTokens.open(config.auth.tokenFile ?? '', log, internal, issued);
      if (endpointConfig && issued) tokenEndpoint = await openTokenEndpoint(endpointConfig, issued, config.tls, log);
    } catch (e) {
      tls?.close();
      tokens?.close();
      throw e;
    }
    const own = clusterExecutorToken ? [{ principal: `token:${CLUSTER_EXECUTORS}`, instance: EVERY_INSTANCE, role: 'worker' as const }] : [];
    const grants = [...config.auth.grants, ...own];
    auth = { tokens, grants: new RoleGrants(grants) };
    interceptors.push(authorizationInterceptor(tokens, auth.grants));
  }
  return {
    scheme: tls ? 'grpcs' : 'grpc',
    credentials: tls ? tls.credentials() : grpc.ServerCredentials.createInsecure(),
    interceptors,
    reloadTls: async () => (tls ? tls.reload() : false),
    reloadTokens: async () => (tokens ? tokens.reload() : false),
    ...(tokenEndpoint ? { tokenEndpoint } : {}),
    ...(auth ? { auth } : {}),
    close: () => {
      tls?.close();
      tokens?.close();
      void tokenEndpoint?.close();
    },
  };
}
