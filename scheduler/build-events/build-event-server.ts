import type * as grpc from '@grpc/grpc-js';
import { googleBuild, systemClock, type Clock } from '../../src/core/index.js';
import type { ServiceRegistration } from '../grpc-server.js';
import type { ServiceContext } from '../service-context.js';
import { BuildEventFiles } from './build-event-files.js';
import { BuildEventQueries } from './build-event-queries.js';
import { buildEventService } from './build-event-service.js';
import { BuildEventStore } from './build-event-store.js';
import type { BuildEventsConfig } from './build-events-config.js';

/** The Build Event Service of a port: its registration, the read side of its store, and what closes it. */
export interface BuildEventServer {
  readonly registration: ServiceRegistration;
  readonly queries: BuildEventQueries;
  readonly store: BuildEventStore;
  close(): Promise<void>;
}

export const BUILD_EVENT_SERVICE_NAME = 'google.devtools.build.v1.PublishBuildEvent';

/** Opens the store of `config` (reading back what its `path` holds) and the service that fills it. */
export async function openBuildEventServer(config: BuildEventsConfig, ctx: ServiceContext, clock: Clock = systemClock): Promise<BuildEventServer> {
  let store: BuildEventStore;
  if (config.path) {
    const { files, invocations } = BuildEventFiles.open(config.path, ctx.log);
    store = new BuildEventStore(config, files, ctx.config.limits.retryAfterMs);
    for (const invocation of invocations) store.restore(invocation);
    if (invocations.length > 0) ctx.log.info(`build events: ${store.size} invocations read back from ${config.path}`);
  } else {
    store = new BuildEventStore(config, undefined, ctx.config.limits.retryAfterMs);
  }
  return {
    registration: {
      name: BUILD_EVENT_SERVICE_NAME,
      definition: googleBuild.PublishBuildEventService as unknown as grpc.ServiceDefinition,
      implementation: buildEventService(ctx, store, clock),
    },
    queries: new BuildEventQueries(store),
    store,
    close: async () => undefined,
  };
}
