// Writes the test benchmark's workspace: N trivial sh_tests (each its own script, so each has its own
// runfiles tree and test action), 100 per package, plus one test_suite per package.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const TESTS_PER_PACKAGE = 100;

/** The script of test `i`: prints its number and passes. */
export function testScript(i) {
  return `#!/bin/sh\necho "test ${i}"\n`;
}

export function generateWorkspace(root, tests) {
  mkdirSync(root, { recursive: true });
  writeFileSync(join(root, 'WORKSPACE'), '');
  for (let p = 0; p * TESTS_PER_PACKAGE < tests; p++) {
    const dir = join(root, `p${p}`);
    mkdirSync(dir, { recursive: true });
    let build = '';
    for (let i = p * TESTS_PER_PACKAGE; i < Math.min(tests, (p + 1) * TESTS_PER_PACKAGE); i++) {
      writeFileSync(join(dir, `t${i}.sh`), testScript(i), { mode: 0o755 });
      build += `sh_test(name = "t${i}", srcs = ["t${i}.sh"], size = "small")\n`;
    }
    build += `test_suite(name = "all_tests")\n`;
    writeFileSync(join(dir, 'BUILD'), build);
  }
}

/** The path of test `i`'s script, to change one test. */
export function testSource(i) {
  return join(`p${Math.floor(i / TESTS_PER_PACKAGE)}`, `t${i}.sh`);
}
