import type * as grpc from '@grpc/grpc-js';
import { googleBuild, systemClock, type Clock } from '../../src/core/index.js';
import type { ServiceRegistration } from '../grpc-server.js';
import type { ServiceContext } from '../service-context.js';
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

/** Opens the store of `config` and the service that fills it. */
export async function openBuildEventServer(config: BuildEventsConfig, ctx: ServiceContext, clock: Clock = systemClock): Promise<BuildEventServer> {
  const store = new BuildEventStore(config, undefined, ctx.config.limits.retryAfterMs);
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
