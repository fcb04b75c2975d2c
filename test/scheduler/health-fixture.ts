import { grpcHealth } from '../../src/core/index.js';
import { grpc } from './cache-server-fixture.js';

/** A plaintext client of grpc.health.v1.Health at `address` (host:port). */
export function healthClient(address: string): grpcHealth.HealthClient {
  const Ctor = grpc.makeGenericClientConstructor(grpcHealth.HealthService as unknown as grpc.ServiceDefinition, 'Health');
  return new Ctor(address, grpc.credentials.createInsecure()) as unknown as grpcHealth.HealthClient;
}

/** Collects a Watch stream's statuses until it ends (resolves with them and the final code). */
export function watchUntilEnd(
  client: grpcHealth.HealthClient,
  service: string,
  onStatus: (s: number) => void,
): Promise<{ statuses: number[]; code: grpc.status }> {
  return new Promise((resolve) => {
    const statuses: number[] = [];
    const stream = client.Watch({ service });
    stream.on('data', (r: grpcHealth.HealthCheckResponse) => {
      statuses.push(r.status);
      onStatus(r.status);
    });
    stream.on('error', (e: grpc.ServiceError) => resolve({ statuses, code: e.code }));
    stream.on('status', (s: grpc.StatusObject) => {
      if (s.code === grpc.status.OK) resolve({ statuses, code: s.code });
    });
  });
}
