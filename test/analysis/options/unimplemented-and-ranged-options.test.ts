import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/core/index.js';
import { parseBuildOptions } from '../../../src/analysis/options/parse-build-options.js';
import { BUILD_OPTIONS } from '../../../src/analysis/options/build-option-registry.js';

function usageMessage(args: string[]): string {
  try {
    parseBuildOptions(args);
  } catch (e) {
    expect(e).toBeInstanceOf(UsageError);
    return (e as Error).message;
  }
  throw new Error(`expected a UsageError for ${args.join(' ')}`);
}

describe('options Kiln accepts but does not implement', () => {
  it('the remote endpoints are errors naming the flag', () => {
    expect(usageMessage(['--remote_executor=grpc://127.0.0.1:1'])).toBe(
      '--remote_executor=grpc://127.0.0.1:1: remote execution and caching from the client are not available yet',
    );
    expect(usageMessage(['--remote_cache', 'grpc://127.0.0.1:1'])).toBe('--remote_cache grpc://127.0.0.1:1: remote execution and caching from the client are not available yet');
  });

  it('tolerated ones warn once, and setting one to its default (an rc file clearing it) is silent', () => {
    const parsed = parseBuildOptions(['--sandbox_debug', '--remote_executor=', '--action_env=A=1', '--action_env=B', '--nobuild_runfile_links', '//a']);
    expect(parsed.warnings).toEqual([
      '--sandbox_debug: it has no effect in Kiln yet; ignored',
      '--action_env=A=1: it has no effect in Kiln yet; ignored',
      '--nobuild_runfile_links: it has no effect in Kiln yet; ignored',
    ]);
    expect(parsed.residue).toEqual(['//a']);
    expect(parseBuildOptions(['--build_runfile_links', '--nosandbox_debug']).warnings).toEqual([]);
  });

  it('every marked option says why', () => {
    const marked = [...BUILD_OPTIONS.definitions()].filter((d) => d.notImplemented);
    expect(marked.map((d) => d.name)).toContain('remote_executor');
    for (const def of marked) expect(def.notImplemented!.reason.length).toBeGreaterThan(10);
  });
});

describe('--jobs follows Bazel', () => {
  it('rejects values below 1 and above 5000 in Bazel\'s words', () => {
    expect(usageMessage(['--jobs=-3'])).toBe("While parsing option --jobs=-3: Value '(-3)' must be at least 1.");
    expect(usageMessage(['-j', '0'])).toBe("While parsing option -j 0: Value '(0)' must be at least 1.");
    expect(usageMessage(['--jobs=5001'])).toBe("While parsing option --jobs=5001: Value '(5001)' must be at most 5000.");
    expect(usageMessage(['--jobs=x'])).toMatch(/^While parsing option --jobs=x: Parameter 'x' does not follow correct syntax\. This flag takes an integer, or a keyword \("auto", "HOST_CPUS", "HOST_RAM"\)/);
  });

  it('takes auto, HOST_CPUS and HOST_RAM with an operation', () => {
    expect(parseBuildOptions(['--jobs=auto']).options.getInt('jobs')).toBe(0);
    expect(parseBuildOptions(['--jobs=5000']).options.getInt('jobs')).toBe(5000);
    expect(parseBuildOptions(['--jobs=HOST_CPUS']).options.getInt('jobs')).toBe(availableParallelism());
    expect(parseBuildOptions(['--jobs=HOST_CPUS*2']).options.getInt('jobs')).toBe(availableParallelism() * 2);
    expect(parseBuildOptions(['--jobs=HOST_RAM*.001']).options.getInt('jobs')).toBeGreaterThan(0);
  });
});
