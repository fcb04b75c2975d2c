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

  it('maps anything else to INTERNAL, never UNKNOWN', () => {
    expect(grpcStatusOf(new Error('boom'))).toEqual({ code: googleRpc.Code.INTERNAL, message: 'boom' });
    expect(grpcStatusOf('text')).toEqual({ code: googleRpc.Code.INTERNAL, message: 'text' });
  });
});
