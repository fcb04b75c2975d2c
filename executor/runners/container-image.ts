import type { PlatformProperty } from './runner.js';

/** The `container-image` platform property, without Bazel's `docker://` prefix (a bare name is taken as it is). */
export function containerImageOf(platform: readonly PlatformProperty[]): string | undefined {
  const value = platform.find((p) => p.name === 'container-image')?.value;
  if (!value) return undefined;
  return value.startsWith('docker://') ? value.slice('docker://'.length) : value;
}
