import { grpcHealth } from '../proto.js';

export type ServingStatus = grpcHealth.HealthCheckResponse_ServingStatus;
export const ServingStatus = grpcHealth.HealthCheckResponse_ServingStatus;

/** Told each new status of a watched service; `closing` once the server shuts down (no status follows). */
export type HealthListener = (status: ServingStatus, closing: boolean) => void;

/**
 * The serving status of a server, per service name (`""` is the server as a whole), as gRPC's health
 * checking protocol reports it. A service never set is unknown (NOT_FOUND to Check). After `shutdown`
 * everything is NOT_SERVING for good, as grpc-go's health server does, so a late `set` of a component
 * still starting cannot make a draining server look ready again.
 */
export class HealthStatus {
  private readonly statuses = new Map<string, ServingStatus>();
  private readonly listeners = new Map<string, Set<HealthListener>>();
  private shutDown = false;

  /** Sets the status of `service` and tells its watchers when it changed. */
  set(service: string, status: ServingStatus): void {
    if (this.shutDown || this.statuses.get(service) === status) return;
    this.statuses.set(service, status);
    for (const listener of this.listeners.get(service) ?? []) listener(status, false);
  }

  /** The status of `service`, undefined when it was never set. */
  get(service: string): ServingStatus | undefined {
    return this.statuses.get(service);
  }

  /** Every service with a status, the server's own (`""`) included. */
  all(): ReadonlyMap<string, ServingStatus> {
    return this.statuses;
  }

  /** Calls `listener` on every change of `service`; returns the call that stops it. */
  watch(service: string, listener: HealthListener): () => void {
    let set = this.listeners.get(service);
    if (!set) this.listeners.set(service, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.listeners.delete(service);
    };
  }

  /**
   * Every known service NOT_SERVING while the server drains (it still answers calls under way, takes
   * no new work); watches stay open, `shutdown` follows.
   */
  drain(): void {
    for (const service of this.statuses.keys()) this.set(service, ServingStatus.NOT_SERVING);
  }

  /** Every known service NOT_SERVING, for good; watchers hear it, then that the server is closing. */
  shutdown(): void {
    for (const service of this.statuses.keys()) this.set(service, ServingStatus.NOT_SERVING);
    this.shutDown = true;
    for (const set of [...this.listeners.values()]) for (const listener of [...set]) listener(ServingStatus.NOT_SERVING, true);
    this.listeners.clear();
  }
}
