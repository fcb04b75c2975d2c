import * as grpc from '@grpc/grpc-js';
import { quotedName } from '../instance-name.js';
import { identifyCaller } from './caller-identity.js';
import type { RoleGrants } from './role-grants.js';
import { isPublicRpc, requiredPermission } from './rpc-permissions.js';
import type { BearerTokens } from './token-file.js';

/**
 * Checks every call on the port before its handler sees it: UNAUTHENTICATED when its credentials are
 * missing or invalid (decided on the headers), PERMISSION_DENIED when no role of the caller allows the
 * RPC on the instance its first message names; public calls (isPublicRpc) pass unchecked. The answer is the same whether or not that instance
 * (or blob, or operation) exists, so a refusal tells nothing about what the server holds.
 */
export function authorizationInterceptor(tokens: BearerTokens | undefined, grants: RoleGrants): grpc.ServerInterceptor {
  return (method, call) => {
    if (isPublicRpc(method.path)) return new grpc.ServerInterceptingCall(call);
    let principals: readonly string[] = [];
    let authorised = false;
    let refused = false;
    const refuse = (code: grpc.status, details: string) => {
      refused = true;
      call.sendStatus({ code, details, metadata: new grpc.Metadata() });
    };
    return new grpc.ServerInterceptingCall(call, {
      start: (next) =>
        next({
          onReceiveMetadata: (metadata, nextMetadata) => {
            const caller = identifyCaller(metadata, call.getAuthContext(), tokens, grants.admitsAnonymous);
            if ('unauthenticated' in caller) return refuse(grpc.status.UNAUTHENTICATED, caller.unauthenticated);
            principals = caller.principals;
            nextMetadata(metadata);
          },
          onReceiveMessage: (message, nextMessage) => {
            if (refused) return;
            if (!authorised) {
              const { permission, instance } = requiredPermission(method.path, message);
              if (!grants.permits(principals, permission, instance)) {
                const where = instance === undefined ? '' : ` on instance ${quotedName(instance)}`;
                return refuse(grpc.status.PERMISSION_DENIED, `permission denied: ${method.path}${where}`);
              }
              authorised = true;
            }
            nextMessage(message);
          },
          onReceiveHalfClose: (nextHalfClose) => {
            if (!refused) nextHalfClose();
          },
        }),
    });
  };
}
