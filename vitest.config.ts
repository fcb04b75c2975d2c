import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/setup/fast-check-seed.ts'],
    // Two cores: keep the pool small so server and Docker tests do not starve each other.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    // Hermetic rc files: no test reads the machine's /etc/bazel.bazelrc (Kiln, and each kiln it starts with this environment).
    env: { KILN_SYSTEM_BAZELRC: '' },
    hookTimeout: 120_000,
  },
});
