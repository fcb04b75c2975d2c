import * as grpc from '@grpc/grpc-js';
import { grpcHealth } from '../proto.js';
import { type HealthStatus, ServingStatus } from './health-status.js';

/** Longest service name echoed in a NOT_FOUND message. */
const MAX_QUOTED_NAME = 200;

/**
 * Handlers of `grpc.health.v1.Health` over `health`, as gRPC's health checking protocol says: Check of
 * an unknown service is NOT_FOUND; Watch sends the current status at once (SERVICE_UNKNOWN for an
 * unknown service, without ending the call) and then every change; List gives every known service.
 * A Watch ends with OK when the server shuts down, after NOT_SERVING, so the server's own shutdown
 * does not wait on probes.
 */
export function healthService(health: HealthStatus): grpcHealth.HealthServer {
  return {
    Check: (call, callback) => {
      const service = call.request.service;
      const status = health.get(service);
      if (status === undefined) {
        callback({ code: grpc.status.NOT_FOUND, details: `unknown service ${JSON.stringify(service.slice(0, MAX_QUOTED_NAME))}` });
        return;
      }
      callback(null, { status });
    },
    List: (_call, callback) => {
      callback(null, { statuses: Object.fromEntries([...health.all()].map(([service, status]) => [service, { status }])) });
    },
    Watch: (call) => {
      const service = call.request.service;
      let last = health.get(service) ?? ServingStatus.SERVICE_UNKNOWN;
      call.write({ status: last });
      const stop = health.watch(service, (status, closing) => {
        if (status !== last) call.write({ status });
        last = status;
        if (closing) call.end();
      });
      call.on('cancelled', stop);
      call.on('close', stop);
    },
  };
}

/** The service definition, typed for grpc-js's `addService`. */
export const healthServiceDefinition = grpcHealth.HealthService as unknown as grpc.ServiceDefinition;
export const HEALTH_SERVICE_NAME = 'grpc.health.v1.Health';
