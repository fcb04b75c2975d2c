import { ROLE_PERMISSIONS, type Permission } from './rpc-permissions.js';
import { ANONYMOUS, EVERY_INSTANCE, type RoleGrant } from './security-config.js';

/** The configured grants, asked whether some principal of a caller may do something on an instance. */
export class RoleGrants {
  /** Whether a call without credentials is let in (as `anonymous`) rather than refused UNAUTHENTICATED. */
  readonly admitsAnonymous: boolean;

  constructor(private readonly grants: readonly RoleGrant[]) {
    this.admitsAnonymous = grants.some((g) => g.principal === ANONYMOUS);
  }

  /**
   * @param instance undefined when the request names no instance that could exist: only a grant on
   *   every instance covers it (the handler then says what is wrong with the name)
   */
  permits(principals: readonly string[], permission: Permission, instance: string | undefined): boolean {
    return this.grants.some(
      (g) => principals.includes(g.principal) && (g.instance === EVERY_INSTANCE || g.instance === instance) && ROLE_PERMISSIONS[g.role].includes(permission),
    );
  }
}
