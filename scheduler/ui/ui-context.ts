import { InvalidArgumentError, isEmptyDigest, NotFoundError, type Digest } from '../../src/core/index.js';
import type { BuildEventQueries } from '../build-events/index.js';
import type { ExecutionScheduler } from '../execution/index.js';
import type { ServiceContext } from '../service-context.js';
import type { Html } from './html.js';
import type { InvocationReports } from './invocation-report.js';
import type { UiCaller } from './ui-caller.js';

/** What the pages read: the stores, the invocations, the scheduler's state. */
export interface UiContext {
  readonly server: ServiceContext;
  /** Absent when the port serves no Build Event Service. */
  readonly buildEvents?: BuildEventQueries;
  /** Absent on a port without the execution half (a storage node). */
  readonly scheduler?: ExecutionScheduler;
  /** The gRPC endpoint clients use (`grpc://HOST:PORT`), for the command lines the pages show. */
  readonly endpoint: string;
  /** What the invocation pages read from BEP events so far, kept between refreshes. */
  readonly reports: InvocationReports;
}

/** One request as a page sees it. */
export interface UiRequest {
  readonly url: URL;
  readonly method: 'GET' | 'HEAD' | 'POST';
  readonly caller: UiCaller;
  /** A POST's form fields. */
  readonly form: URLSearchParams;
}

/** What a page answers. */
export type PageResult =
  | { readonly kind: 'html'; readonly status?: number; readonly body: Html }
  | { readonly kind: 'redirect'; readonly location: string; readonly cookie?: string }
  | {
      readonly kind: 'blob';
      readonly contentType: string;
      readonly disposition: string;
      readonly sizeBytes: number;
      readonly chunks: AsyncIterable<Buffer>;
    };

/** The same answer for a blob that is not there and one on an instance the caller may not read: nothing leaks. */
export function notFound(what: string): NotFoundError {
  return new NotFoundError(`${what} is not here, or you may not read it`);
}

/**
 * The stores of an instance the caller may read.
 * @throws NotFoundError otherwise (an unknown instance is answered the same)
 */
export function readableInstance(ui: UiContext, caller: UiCaller, instanceName: string, what: string) {
  if (!caller.mayRead(instanceName) || !ui.server.instances.names.includes(instanceName)) throw notFound(what);
  return ui.server.instances.get(instanceName);
}

/** A blob of a readable instance, decoded with `codec`. @throws NotFoundError, InvalidArgumentError (not that message) */
export async function readMessage<T>(
  ui: UiContext,
  caller: UiCaller,
  instanceName: string,
  digest: Digest,
  codec: { decode(bytes: Buffer): T },
  what: string,
): Promise<T> {
  const instance = readableInstance(ui, caller, instanceName, what);
  let bytes: Buffer;
  try {
    bytes = await instance.cas.get(digest);
  } catch (e) {
    if (e instanceof NotFoundError) throw notFound(what);
    throw e;
  }
  try {
    return codec.decode(bytes);
  } catch (e) {
    throw new InvalidArgumentError(`${what} is not a valid message: ${(e as Error).message}`);
  }
}

/** Up to `limit` bytes of a blob as text, and whether it was cut; undefined when it cannot be read. */
export async function readText(
  ui: UiContext,
  caller: UiCaller,
  instanceName: string,
  digest: Digest,
  limit = 64 * 1024,
): Promise<{ text: string; cut: boolean } | undefined> {
  try {
    const instance = readableInstance(ui, caller, instanceName, 'the blob');
    if (isEmptyDigest(digest)) return { text: '', cut: false };
    const read = await instance.cas.read(digest, { limit });
    const parts: Buffer[] = [];
    for await (const chunk of read.chunks) parts.push(chunk);
    return { text: Buffer.concat(parts).toString('utf8'), cut: read.sizeBytes > limit };
  } catch {
    return undefined;
  }
}
