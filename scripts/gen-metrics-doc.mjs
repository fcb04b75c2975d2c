// Writes deploy/metrics.md from the metrics Kiln registers (scripts/metrics-doc.ts, bundled with esbuild).
import { build } from 'esbuild';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
// Inside the checkout (dist/ is not tracked), so that the bundle's npm imports resolve from its node_modules.
const dir = join(root, 'dist', `metrics-doc-${process.pid}`);
mkdirSync(dir, { recursive: true });
try {
  const outfile = join(dir, 'metrics-doc.mjs');
  await build({
    absWorkingDir: root,
    entryPoints: ['scripts/metrics-doc.ts'],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
  });
  writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
  const { renderMetricsDoc } = await import(pathToFileURL(outfile).href);
  writeFileSync(join(root, 'deploy/metrics.md'), renderMetricsDoc());
  console.log('wrote deploy/metrics.md');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
