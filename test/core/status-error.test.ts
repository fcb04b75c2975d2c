import { describe, expect, it } from 'vitest';
import {
  FailedPreconditionError,
  InternalError,
  InvalidArgumentError,
  KilnError,
  NotFoundError,
  OutOfRangeError,
  ResourceExhaustedError,
  UnavailableError,
  googleRpc,
  grpcStatusOf,
  isStatusError,
} from '../../src/core/index.js';

describe('StatusError', () => {
  it.each([
    [new InvalidArgumentError('x'), googleRpc.Code.INVALID_ARGUMENT],
    [new NotFoundError('x'), googleRpc.Code.NOT_FOUND],
    [new ResourceExhaustedError('x', 100), googleRpc.Code.RESOURCE_EXHAUSTED],
    [new FailedPreconditionError('x', [{ type: 'MISSING', subject: 'blobs/a/1', description: '' }]), googleRpc.Code.FAILED_PRECONDITION],
    [new OutOfRangeError('x'), googleRpc.Code.OUT_OF_RANGE],
    [new UnavailableError('x'), googleRpc.Code.UNAVAILABLE],
    [new InternalError('x'), googleRpc.Code.INTERNAL],
  ])('%s maps to its gRPC code 1:1', (error, code) => {
    expect(error.code).toBe(code);
    expect(grpcStatusOf(error)).toEqual({ code, message: 'x' });
    expect(isStatusError(error)).toBe(true);
    expect(error).toBeInstanceOf(KilnError);
  });

  it('keeps its class and code when context is added', () => {
    const e = new NotFoundError('blob a/1 not found').withContext('BatchReadBlobs');
    expect(e).toBeInstanceOf(NotFoundError);
    expect(grpcStatusOf(e)).toEqual({ code: googleRpc.Code.NOT_FOUND, message: 'BatchReadBlobs: blob a/1 not found' });
  });

  it('adds context to a new error, with the original as its cause and its fields kept', () => {
    const original = new ResourceExhaustedError('disk full', 2500);
    const e = original.withContext('Write');
    expect(e).not.toBe(original);
    expect(e).toBeInstanceOf(ResourceExhaustedError);
    expect(e.message).toBe('Write: disk full');
    expect(e.retryAfterMs).toBe(2500);
    expect(e.cause).toBe(original);
    expect(original.message).toBe('disk full');
    const violations = [{ type: 'MISSING', subject: 'blobs/a/1', description: 'gone' }];
    expect(new FailedPreconditionError('missing', violations).withContext('Execute').violations).toEqual(violations);
  });

  it('two concurrent requests sharing one failure each add their own context once', async () => {
    const shared = new NotFoundError('blob a/1 not found');
    const failure = Promise.reject(shared);
    const request = async (method: string) => {
      try {
        await failure;
        return undefined;
      } catch (e) {
        return grpcStatusOf((e as NotFoundError).withContext(method));
      }
    };
    const [first, second] = await Promise.all([request('BatchReadBlobs'), request('BatchReadBlobs')]);
    expect(first).toEqual({ code: googleRpc.Code.NOT_FOUND, message: 'BatchReadBlobs: blob a/1 not found' });
    expect(second).toEqual(first);
    expect(shared.message).toBe('blob a/1 not found');
  });

  it('maps anything else to INTERNAL, never UNKNOWN', () => {
    expect(grpcStatusOf(new Error('boom'))).toEqual({ code: googleRpc.Code.INTERNAL, message: 'boom' });
    expect(grpcStatusOf('text')).toEqual({ code: googleRpc.Code.INTERNAL, message: 'text' });
  });
});
