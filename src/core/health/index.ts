// gRPC health checking (grpc.health.v1): its own entry, so commands that serve nothing do not load it.
export { HealthStatus, ServingStatus, type HealthListener } from './health-status.js';
export { healthService, healthServiceDefinition, HEALTH_SERVICE_NAME } from './health-service.js';
export { openHealthPort, type HealthPort } from './health-port.js';
