import * as grpc from '@grpc/grpc-js';
import { HEALTH_SERVICE_NAME, healthService, healthServiceDefinition } from './health-service.js';
import type { HealthStatus } from './health-status.js';

export interface HealthPort {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * A plaintext port that serves `grpc.health.v1.Health` and nothing else. Kubernetes' `grpc:` probe
 * speaks neither TLS nor tokens, so a server whose real port has TLS (or an executor, which has no
 * port) gives the kubelet this one; it tells only whether the server is serving.
 */
export async function openHealthPort(host: string, port: number, health: HealthStatus): Promise<HealthPort> {
  const server = new grpc.Server();
  server.addService(healthServiceDefinition, healthService(health) as unknown as grpc.UntypedServiceImplementation);
  const address = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(new Error(`${HEALTH_SERVICE_NAME} on ${address}: ${err.message}`)) : resolve(p),
    ),
  );
  return {
    port: bound,
    close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  };
}
