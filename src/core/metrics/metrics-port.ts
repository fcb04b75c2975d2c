import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';

export interface MetricsPort {
  readonly port: number;
  /** `http://HOST:PORT/metrics`, what a Prometheus scrape config names. */
  readonly url: string;
  close(): Promise<void>;
}

/** What else the port serves (the scheduler's web UI): every request for a path other than `/metrics`. */
export type HttpPages = (request: IncomingMessage, response: ServerResponse) => void;

/**
 * A plaintext HTTP port that serves `registry` in Prometheus' text format on `GET /metrics`, and
 * `pages` on every other path (without them: 404 for other paths, 405 for other methods). Port 0
 * picks a free one. `/metrics` says nothing a client could not learn by using the cluster, so it
 * needs no credentials (`pages` check their own); keep the port off public networks all the same
 * (the Kubernetes manifests expose it only to the scraper).
 */
export async function openMetricsPort(host: string, port: number, registry: Registry, pages?: HttpPages): Promise<MetricsPort> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if (path !== '/metrics' && pages) {
      pages(request, response);
      return;
    }
    if (path !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found: metrics are at /metrics\n');
      return;
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('method not allowed\n');
      return;
    }
    registry.metrics().then(
      (text) => response.writeHead(200, { 'content-type': registry.contentType }).end(request.method === 'HEAD' ? undefined : text),
      (e: unknown) => response.writeHead(500, { 'content-type': 'text/plain' }).end(`collecting metrics failed: ${(e as Error)?.message ?? String(e)}\n`),
    );
  });
  // A scraper keeps its connection open; close() must not wait for it.
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e) => reject(new Error(`metrics port ${host}:${port}: ${e.message}`, { cause: e })));
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as { port: number }).port;
  const shownHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  return {
    port: bound,
    url: `http://${shownHost}:${bound}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
