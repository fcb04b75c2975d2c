// Compiles Kiln's native process starter and sandbox (src/core/sandbox/native/*.c) into dist/native/
// when a C compiler is present. Without one Kiln starts processes from a Node helper instead
// (SpawnServer), slower per process but otherwise the same; this script then says so and succeeds.
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = `${root}dist/native/kiln-spawn`;
rmSync(out, { force: true });
mkdirSync(`${root}dist/native`, { recursive: true });
const cc = process.env.CC || 'cc';
const sources = ['kiln-spawn.c', 'sandbox.c'].map((file) => `${root}src/core/sandbox/native/${file}`);
const compile = (extra, stdio) => spawnSync(cc, ['-O2', '-Wall', '-Wextra', '-Werror', ...extra, '-o', out, ...sources], { stdio });
// Linked statically where the C library allows it: every sandbox's pid 1 is a fork of the helper,
// and a static one has a handful of mappings to copy and tear down instead of two libraries' worth
// (~4% less CPU per sandboxed action). Without a static C library (libc.a), dynamically.
let result = compile(['-static'], 'ignore');
if (result.error || result.status !== 0) result = compile([], 'inherit');
if (result.error || result.status !== 0) {
  console.warn(
    `build-native: no native process starter (${result.error ? `${cc}: ${result.error.message}` : `${cc} exited ${result.status}`}); processes start from a Node helper`,
  );
}
