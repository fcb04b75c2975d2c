// Bundles the CLI into dist/bundle/ so that a command loads one file per chunk instead of dozens of
// modules: each command in src/cli/command-table.ts becomes its own chunk (they are dynamic imports),
// and what a command does not use is left out. npm packages stay external (native addons, grpc-js).
import { build } from 'esbuild';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const outdir = `${root}dist/bundle`;
rmSync(outdir, { recursive: true, force: true });
await build({
  absWorkingDir: root,
  // The spawn server runs as its own process; SpawnServer finds it beside the chunks by this name.
  entryPoints: {
    kiln: 'src/cli/index.ts',
    'spawn-server-main': 'src/core/sandbox/spawn-server-main.ts',
    // The thread that writes downloaded outputs; FileWriterThread finds it beside the chunks by this name.
    'file-writer-main': 'src/remote/file-writer-main.ts',
  },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  sourcemap: 'linked',
  logLevel: 'warning',
});
