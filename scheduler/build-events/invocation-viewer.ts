import { RoleGrants } from '../security/role-grants.js';
import type { SecurityConfig } from '../security/security-config.js';
import { EVERYONE, type InvocationViewer } from './build-event-queries.js';

/**
 * The viewer a caller with `principals` is (those identifyCaller gave it): it sees the invocations of
 * the instances it may read. Everyone sees all with auth off.
 */
export function invocationViewer(security: SecurityConfig, principals: readonly string[]): InvocationViewer {
  if (security.auth.kind === 'off') return EVERYONE;
  const grants = new RoleGrants(security.auth.grants);
  return { mayRead: (instance) => grants.permits(principals, 'read', instance) };
}
