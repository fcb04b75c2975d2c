import { InvalidArgumentError, type longrunning, msFromDuration } from '../../src/core/index.js';
import { unaryHandler, type ServiceContext } from '../service-context.js';
import type { ExecutionScheduler } from './execution-scheduler.js';
import { operationMessage } from './operation-message.js';

/** google.longrunning.Operations over the scheduler's operations. */
export function operationsService(ctx: ServiceContext, scheduler: ExecutionScheduler): longrunning.OperationsServer {
  return {
    GetOperation: unaryHandler(
      ctx,
      'GetOperation',
      () => 0,
      async (request) => operationMessage(scheduler.get(request.name)),
    ),
    ListOperations: unaryHandler(
      ctx,
      'ListOperations',
      () => 0,
      async (request) => {
        if (request.filter !== '') throw new InvalidArgumentError('filter: filters are not supported; leave it empty');
        const prefix = request.name === '' || request.name === 'operations' ? '' : request.name.replace(/\/?operations$/, '');
        const all = scheduler
          .list()
          .filter((op) => prefix === '' || op.instanceName === prefix)
          .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
        const start = request.pageToken === '' ? 0 : Number(request.pageToken);
        if (!Number.isInteger(start) || start < 0)
          throw new InvalidArgumentError(`page_token: ${JSON.stringify(request.pageToken)} is not a token this server issued`);
        const size = request.pageSize > 0 ? Math.min(request.pageSize, 1000) : 1000;
        const page = all.slice(start, start + size);
        return { operations: page.map(operationMessage), nextPageToken: start + size < all.length ? String(start + size) : '' };
      },
    ),
    CancelOperation: unaryHandler(
      ctx,
      'CancelOperation',
      () => 0,
      async (request) => {
        scheduler.cancel(request.name);
        return {};
      },
    ),
    DeleteOperation: unaryHandler(
      ctx,
      'DeleteOperation',
      () => 0,
      async (request) => {
        scheduler.delete(request.name);
        return {};
      },
    ),
    WaitOperation: unaryHandler(
      ctx,
      'WaitOperation',
      () => 0,
      async (request, call) => {
        const timeoutMs = request.timeout ? msFromDuration(request.timeout, 'WaitOperationRequest.timeout') : 60_000;
        return await new Promise((resolve) => {
          let stop: (() => void) | undefined;
          let settled = false;
          const settle = (op: Parameters<typeof operationMessage>[0]) => {
            if (settled) return;
            settled = true;
            clearTimeout(timer);
            queueMicrotask(() => stop?.());
            resolve(operationMessage(op));
          };
          // Like the spec's WaitOperation: the latest state when the timeout passes, done or not.
          const timer = setTimeout(() => settle(scheduler.get(request.name)), Math.max(0, timeoutMs));
          call.on('cancelled', () => {
            clearTimeout(timer);
            stop?.();
          });
          stop = scheduler.watch(request.name, (op) => {
            if (op.done) settle(op);
          });
          if (settled) stop();
        });
      },
    ),
  };
}
