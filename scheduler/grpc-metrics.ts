import * as grpc from '@grpc/grpc-js';
import { Counter, DURATION_BUCKETS, familiesOf, Histogram, secondsSince, type Registry } from '../src/core/metrics/index.js';

type GrpcLabels = 'grpc_service' | 'grpc_method' | 'grpc_code';

/** gRPC server families (go-grpc-prometheus' names, prefixed `kiln_`). */
interface GrpcServerMetrics {
  readonly started: Counter<'grpc_service' | 'grpc_method'>;
  readonly handled: Counter<GrpcLabels>;
  readonly handling: Histogram<GrpcLabels>;
}

function grpcServerMetricsOf(registry: Registry): GrpcServerMetrics {
  return familiesOf(registry, 'grpc-server', (r) => ({
    started: new Counter({
      name: 'kiln_grpc_server_started_total',
      help: 'RPCs started on the server.',
      labelNames: ['grpc_service', 'grpc_method'],
      registers: [r],
    }),
    handled: new Counter({
      name: 'kiln_grpc_server_handled_total',
      help: 'RPCs completed on the server, by the gRPC code answered (refusals by authentication and admission control included).',
      labelNames: ['grpc_service', 'grpc_method', 'grpc_code'],
      registers: [r],
    }),
    handling: new Histogram({
      name: 'kiln_grpc_server_handling_seconds',
      help: 'Time from the start of an RPC to its status (a stream: its whole life; a held Synchronize: the hold).',
      labelNames: ['grpc_service', 'grpc_method', 'grpc_code'],
      buckets: DURATION_BUCKETS,
      registers: [r],
    }),
  }));
}

/** `/pkg.Service/Method` as its labels. */
function methodLabels(path: string): { grpc_service: string; grpc_method: string } {
  const [, service = 'unknown', method = 'unknown'] = /^\/([^/]+)\/([^/]+)$/.exec(path) ?? [];
  return { grpc_service: service, grpc_method: method };
}

/**
 * Counts and times every call on the port by service, method and the code answered. It goes first
 * among the port's interceptors, so calls refused by authorization are counted too.
 */
export function grpcMetricsInterceptor(registry: Registry): grpc.ServerInterceptor {
  const metrics = grpcServerMetricsOf(registry);
  return (method, call) => {
    const labels = methodLabels(method.path);
    metrics.started.inc(labels);
    const start = process.hrtime.bigint();
    let recorded = false;
    const record = (code: grpc.status) => {
      if (recorded) return;
      recorded = true;
      const withCode = { ...labels, grpc_code: grpc.status[code] ?? String(code) };
      metrics.handled.inc(withCode);
      metrics.handling.observe(withCode, secondsSince(start));
    };
    return new grpc.ServerInterceptingCall(call, {
      start: (next) =>
        next({
          onCancel: () => record(grpc.status.CANCELLED),
        }),
      sendStatus: (status, next) => {
        record(status.code);
        next(status);
      },
    });
  };
}
