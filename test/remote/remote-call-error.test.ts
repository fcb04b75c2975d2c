import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { remoteCallError } from '../../src/remote/remote-call-error.js';

describe('remoteCallError', () => {
  it('adds context in a new error with the failure as its cause, leaving the shared failure unchanged', () => {
    const failure = Object.assign(new Error('14 UNAVAILABLE: connection refused'), { code: grpc.status.UNAVAILABLE, details: 'connection refused' });
    const first = remoteCallError(failure, 'Execute on grpc://a:1');
    const second = remoteCallError(failure, 'FindMissingBlobs on grpc://a:1');
    expect(first.message).toBe('Execute on grpc://a:1: UNAVAILABLE: connection refused');
    expect(second.message).toBe('FindMissingBlobs on grpc://a:1: UNAVAILABLE: connection refused');
    expect([first.cause, second.cause]).toEqual([failure, failure]);
    expect(failure.message).toBe('14 UNAVAILABLE: connection refused');
  });

  it('keeps a non-gRPC failure as the cause of its INTERNAL error', () => {
    const failure = new TypeError('bad frame');
    const e = remoteCallError(failure, 'Read on grpc://a:1');
    expect(e.code).toBe(grpc.status.INTERNAL);
    expect(e.message).toBe('Read on grpc://a:1: bad frame');
    expect(e.cause).toBe(failure);
    expect(failure.message).toBe('bad frame');
  });
});
