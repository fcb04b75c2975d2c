import { describe, expect, it } from 'vitest';
import { ResourceExhaustedError } from '../../src/core/index.js';
import { InFlightLimiter } from '../../scheduler/in-flight-limiter.js';

const limits = { maxConcurrentRequests: 3, maxInFlightBytes: 1000, retryAfterMs: 250 };

describe('InFlightLimiter', () => {
  it('refuses requests beyond the concurrency limit until one is released', () => {
    const limiter = new InFlightLimiter(limits);
    const held = [limiter.admit('a'), limiter.admit('b'), limiter.admit('c')];
    expect(() => limiter.admit('d')).toThrow(ResourceExhaustedError);
    held[0]!.release();
    held[0]!.release(); // releasing twice changes nothing
    expect(limiter.load.requests).toBe(2);
    expect(() => limiter.admit('d')).not.toThrow();
  });

  it('refuses bytes beyond the budget while others hold bytes, with the retry delay', () => {
    const limiter = new InFlightLimiter(limits);
    const a = limiter.admit('a', 800);
    let refusal: unknown;
    try {
      limiter.admit('b', 300);
    } catch (e) {
      refusal = e;
    }
    expect(refusal).toBeInstanceOf(ResourceExhaustedError);
    expect((refusal as ResourceExhaustedError).retryAfterMs).toBe(250);
    expect((refusal as Error).message).toMatch(/b: server is busy \(800 bytes in flight, 300 more requested, limit 1000\)/);
    // Growing a stream's chunk is checked the same way; shrinking always works.
    const b = limiter.admit('b', 100);
    expect(() => b.resize(500)).toThrow(ResourceExhaustedError);
    b.resize(0);
    a.release();
    expect(limiter.load).toEqual({ requests: 1, bytes: 0 });
  });

  it('admits a request larger than the whole budget when nothing else holds bytes', () => {
    const limiter = new InFlightLimiter(limits);
    const big = limiter.admit('big', 5000);
    expect(limiter.load.bytes).toBe(5000);
    expect(() => limiter.admit('small', 1)).toThrow(ResourceExhaustedError);
    big.release();
    expect(limiter.load).toEqual({ requests: 0, bytes: 0 });
  });
});
