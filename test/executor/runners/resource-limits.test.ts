import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../../src/core/index.js';
import {
  DEFAULT_RESOURCE_LIMITS,
  defaultResourceLimitPolicy,
  describeResourceLimitPolicy,
  limitsForAction,
  parseByteSize,
  parseResourceLimitPolicy,
  type ResourceLimitPolicy,
} from '../../../executor/runners/resource-limits.js';

const fail = (field: string, message: string): never => {
  throw new Error(`${field}: ${message}`);
};

describe('resource limits', () => {
  it('defaults to 1 GiB, 256 pids, 2 CPUs (fewer on a smaller machine), ceilings equal to them', () => {
    expect(DEFAULT_RESOURCE_LIMITS).toEqual({ memoryBytes: 1024 ** 3, pids: 256, cpus: 2 });
    expect(defaultResourceLimitPolicy(1)).toEqual({
      defaults: { memoryBytes: 1024 ** 3, pids: 256, cpus: 1 },
      ceilings: { memoryBytes: 1024 ** 3, pids: 256, cpus: 1 },
    });
    expect(describeResourceLimitPolicy(defaultResourceLimitPolicy(8))).toBe('memory 1g, pids 256, CPUs 2 per action');
  });

  it.each([
    ['1073741824', 1073741824],
    ['512m', 512 * 1024 ** 2],
    ['2g', 2 * 1024 ** 3],
    ['2GiB', 2 * 1024 ** 3],
    ['64K', 64 * 1024],
    ['1.5g', 1.5 * 1024 ** 3],
    ['0', 0],
    ['lots', undefined],
    ['-1', undefined],
    ['1e9', undefined],
    ['99999999999999999999', undefined],
  ])('parses the size %j', (text, bytes) => expect(parseByteSize(text)).toBe(bytes));

  const policy: ResourceLimitPolicy = {
    defaults: { memoryBytes: 1024 ** 3, pids: 256, cpus: 2 },
    ceilings: { memoryBytes: 4 * 1024 ** 3, pids: 256, cpus: 4 },
  };

  it('takes max-mem, max-pids and max-cores within the ceilings, lowering always allowed', () => {
    expect(limitsForAction(policy, [])).toEqual(policy.defaults);
    expect(
      limitsForAction(policy, [
        { name: 'max-mem', value: '2g' },
        { name: 'max-pids', value: '64' },
        { name: 'max-cores', value: '0.5' },
        { name: 'OSFamily', value: 'linux' },
      ]),
    ).toEqual({ memoryBytes: 2 * 1024 ** 3, pids: 64, cpus: 0.5 });
  });

  it.each([
    [
      { name: 'max-mem', value: '8g' },
      /platform property max-mem=8g is above this executor's ceiling of 4g \(the operator raises it with --max-memory-limit\)/,
    ],
    [{ name: 'max-pids', value: '257' }, /max-pids=257 is above this executor's ceiling of 256 .*--max-pids-limit/],
    [{ name: 'max-cores', value: '5' }, /max-cores=5 is above .* ceiling of 4 .*--max-cpu-limit/],
    [{ name: 'max-mem', value: 'lots' }, /platform property max-mem="lots": expected bytes/],
    [{ name: 'max-mem', value: '1m' }, /max-mem="1m": expected bytes .* above 6m/],
    [{ name: 'max-pids', value: '0' }, /max-pids="0": expected an integer above 0/],
    [{ name: 'max-cores', value: 'all' }, /max-cores="all": expected a number of CPUs/],
  ])('rejects %j with INVALID_ARGUMENT naming it', (property, message) => {
    expect(() => limitsForAction(policy, [property])).toThrow(InvalidArgumentError);
    expect(() => limitsForAction(policy, [property])).toThrow(message);
  });

  it('reads flags and config values; an absent ceiling is the default; 0 is no limit', () => {
    const base = defaultResourceLimitPolicy(8);
    expect(parseResourceLimitPolicy({}, base, fail)).toEqual(base);
    expect(parseResourceLimitPolicy({ 'memory-limit': '2g', 'pids-limit': 100, 'max-pids-limit': '0', 'cpu-limit': '0' }, base, fail)).toEqual({
      defaults: { memoryBytes: 2 * 1024 ** 3, pids: 100, cpus: 0 },
      ceilings: { memoryBytes: 2 * 1024 ** 3, pids: 0, cpus: 0 },
    });
    expect(() => parseResourceLimitPolicy({ 'memory-limit': 'big' }, base, fail)).toThrow(
      /^memory-limit: expected bytes .* of at least 6m \(0 for no limit\), got "big"/,
    );
    expect(() => parseResourceLimitPolicy({ 'pids-limit': true }, base, fail)).toThrow(/^pids-limit: expected an integer/);
    expect(() => parseResourceLimitPolicy({ 'max-pids-limit': '10' }, base, fail)).toThrow(/^max-pids-limit: the ceiling 10 is below the default limit 256/);
  });
});
