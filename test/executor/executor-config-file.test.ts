import { describe, expect, it } from 'vitest';
import { readExecutorConfigFile } from '../../executor/index.js';

describe('readExecutorConfigFile', () => {
  it('reads every key of the file, typed; the limit keys are kept apart for parseResourceLimitPolicy', () => {
    const typed = {
      scheduler: 'grpc://127.0.0.1:8980',
      runner: 'docker',
      slots: 4,
      platform: ['OSFamily=linux', 'pool=big'],
      instance: 'main',
      'work-dir': '/var/kiln',
      'cache-size': 1024,
      name: 'worker-1',
      image: 'kiln/tools:1',
    };
    const limits = { 'memory-limit': '2g', 'pids-limit': 512 };
    expect(readExecutorConfigFile({ ...typed, ...limits })).toEqual({ ...typed, limits });
    expect(readExecutorConfigFile({})).toEqual({ limits: {} });
  });

  it.each([
    [{ slot: 4 }, /^slot: unknown field \(allowed: scheduler, runner, slots, .*\)$/],
    [{ config: 'other.json' }, /^config: unknown field/],
    [[], /^expected an object, got \[\]$/],
    [{ slots: '4' }, /^slots: expected a positive integer, got "4"$/],
    [{ slots: 0 }, /^slots: expected a positive integer, got 0$/],
    [{ runner: 'podman' }, /^runner: expected one of "local", "docker", got "podman"$/],
    [{ platform: 'OSFamily=linux' }, /^platform: expected an array of "NAME=VALUE" strings, got "OSFamily=linux"$/],
    [{ platform: ['OSFamily=linux', 7] }, /^platform\[1\]: expected a string, got 7$/],
    [{ platform: ['=linux'] }, /^platform\[0\]: expected "NAME=VALUE", got "=linux"$/],
    [{ 'cache-size': -1 }, /^cache-size: expected a positive integer, got -1$/],
    [{ image: '' }, /^image: expected a non-empty string, got ""$/],
    [{ 'memory-limit': true }, /^memory-limit: expected a number or a size such as "2g", got true$/],
  ])('%j is refused, naming the field: %s', (json, message) => {
    expect(() => readExecutorConfigFile(json)).toThrow(message);
  });
});
