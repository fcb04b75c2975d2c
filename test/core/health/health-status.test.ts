import { describe, expect, it } from 'vitest';
import { grpcHealth } from '../../../src/core/index.js';
import { HealthStatus, healthServiceDefinition, ServingStatus } from '../../../src/core/health/index.js';

describe('grpc.health.v1 as upstream defines it (grpc/grpc-proto health.proto)', () => {
  it('has upstream names, field numbers, enum values and methods', () => {
    const fields = (codec: { type: { fieldsArray: { name: string; id: number; type: string; map?: boolean }[] } }) =>
      codec.type.fieldsArray.map((f) => [f.name, f.id, f.type]);
    expect(grpcHealth.HealthCheckRequest.typeName).toBe('grpc.health.v1.HealthCheckRequest');
    expect(fields(grpcHealth.HealthCheckRequest)).toEqual([['service', 1, 'string']]);
    expect(fields(grpcHealth.HealthCheckResponse)).toEqual([['status', 1, 'ServingStatus']]);
    expect(fields(grpcHealth.HealthListResponse)).toEqual([['statuses', 1, 'HealthCheckResponse']]);
    expect(fields(grpcHealth.HealthListRequest)).toEqual([]);
    expect({ ...grpcHealth.HealthCheckResponse_ServingStatus }).toMatchObject({ UNKNOWN: 0, SERVING: 1, NOT_SERVING: 2, SERVICE_UNKNOWN: 3 });
    const methods = Object.values(healthServiceDefinition).map((m) => [m.path, m.requestStream, m.responseStream]);
    expect(methods).toEqual([
      ['/grpc.health.v1.Health/Check', false, false],
      ['/grpc.health.v1.Health/List', false, false],
      ['/grpc.health.v1.Health/Watch', false, true],
    ]);
  });
});

describe('HealthStatus', () => {
  it('tells watchers of changes only, and after shutdown stays NOT_SERVING whatever is set', () => {
    const health = new HealthStatus();
    const heard: [ServingStatus, boolean][] = [];
    const stop = health.watch('', (status, closing) => heard.push([status, closing]));
    health.set('', ServingStatus.SERVING);
    health.set('', ServingStatus.SERVING);
    health.shutdown();
    health.set('', ServingStatus.SERVING);
    stop();
    expect(heard).toEqual([
      [ServingStatus.SERVING, false],
      [ServingStatus.NOT_SERVING, false],
      [ServingStatus.NOT_SERVING, true],
    ]);
    expect(health.get('')).toBe(ServingStatus.NOT_SERVING);
    expect(health.get('other')).toBeUndefined();
  });
});
