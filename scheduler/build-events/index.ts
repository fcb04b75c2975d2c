// The Build Event Service (google.devtools.build.v1.PublishBuildEvent) and what it keeps.
export { buildEventService } from './build-event-service.js';
export { BuildEventStore, type InvocationJournal } from './build-event-store.js';
export { BuildEventQueries, EVERYONE, type InvocationDetails, type InvocationFilter, type InvocationViewer } from './build-event-queries.js';
export { DEFAULT_BUILD_EVENTS, parseBuildEventsConfig, type BuildEventsConfig } from './build-events-config.js';
export { invocationViewer } from './invocation-viewer.js';
export type { InvocationStatus, InvocationSummary, InvocationTarget } from './invocation.js';
export { openBuildEventServer, BUILD_EVENT_SERVICE_NAME, type BuildEventServer } from './build-event-server.js';
