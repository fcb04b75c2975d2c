import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { RoleGrants } from '../security/role-grants.js';
import { ANONYMOUS } from '../security/security-config.js';
import type { BearerTokens } from '../security/token-file.js';

/** The cookie the login page sets: the token itself, HttpOnly and SameSite=Strict. */
export const SESSION_COOKIE = 'kiln_token';

/** Who a page is shown to, asked per instance as the gRPC port asks per call. */
export interface UiCaller {
  /** `token:NAME`, `anonymous`, or nothing with auth off. */
  readonly principals: readonly string[];
  /** False with auth off. */
  readonly signedIn: boolean;
  mayRead(instance: string): boolean;
  /** Reruns an action: the `administer` permission (admin). */
  mayAdminister(instance: string): boolean;
  /** What a form that changes something must send back (a request from another site cannot know it). */
  readonly formToken: string;
}

export type UiIdentity = { readonly caller: UiCaller } | { readonly unauthenticated: string };

/** Tokens and grants of the port (absent with auth off) and the server's secret for form tokens. */
export interface UiAuth {
  readonly auth?: { readonly tokens: BearerTokens; readonly grants: RoleGrants };
  readonly secret: Buffer;
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** The cookie's value, if the request carries it. */
export function sessionToken(request: IncomingMessage): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === SESSION_COOKIE) {
      try {
        return decodeURIComponent(value.join('='));
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/**
 * The caller of a page, as the cluster's port identifies a call: the holder of the token of an
 * `authorization: Bearer` header (scripts, curl) or of the login cookie (browsers), else `anonymous`
 * where the config grants it a role. A token that does not check out is refused, never taken for
 * anonymous. With auth off, everyone may do everything, as on the gRPC port.
 */
export function identifyUiCaller(request: IncomingMessage, ui: UiAuth): UiIdentity {
  const formToken = (principals: readonly string[]) => createHmac('sha256', ui.secret).update(principals.join('\n')).digest('base64url');
  if (!ui.auth) {
    return { caller: { principals: [], signedIn: false, mayRead: () => true, mayAdminister: () => true, formToken: formToken([]) } };
  }
  const { tokens, grants } = ui.auth;
  let token: string | undefined;
  const header = request.headers.authorization;
  if (header !== undefined) {
    const m = BEARER.exec(header);
    if (!m) return { unauthenticated: 'the authorization header is not "Bearer TOKEN"' };
    token = m[1]!;
  } else {
    token = sessionToken(request);
  }
  let principals: string[];
  if (token !== undefined) {
    const name = tokens.nameOf(token);
    if (name === undefined) return { unauthenticated: 'the token is not valid' };
    principals = [`token:${name}`];
  } else if (grants.admitsAnonymous) {
    principals = [ANONYMOUS];
  } else {
    return { unauthenticated: 'sign in with a token of the cluster' };
  }
  return {
    caller: {
      principals,
      signedIn: token !== undefined,
      mayRead: (instance) => grants.permits(principals, 'read', instance),
      mayAdminister: (instance) => grants.permits(principals, 'administer', instance),
      formToken: formToken(principals),
    },
  };
}

/** Whether a form sent back the caller's form token. */
export function formTokenMatches(caller: UiCaller, sent: string | undefined): boolean {
  if (sent === undefined) return false;
  const a = Buffer.from(sent);
  const b = Buffer.from(caller.formToken);
  return a.length === b.length && timingSafeEqual(a, b);
}
