#!/usr/bin/env node
// Analyses every target of a workspace (like `bazel build --nobuild //...`) in one process and
// prints "<targets> targets, <actions> actions". Used by run.mjs; needs `npm run build` first.
//
//   node bench/analysis/analyze-workspace.mjs WORKSPACE_DIR OUTPUT_BASE [BUILD OPTIONS...]
import { resolve } from 'node:path';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const loading = await import(join(REPO, 'dist/src/loading/index.js'));
const analysis = await import(join(REPO, 'dist/src/analysis/index.js'));

const [root, outputBase, ...buildOptions] = process.argv.slice(2);
const workspace = new loading.Workspace(resolve(root), '');
const loader = new loading.PackageLoader({ workspace, outputBase: resolve(outputBase) });
const graph = new analysis.LoadedTargetGraph(loader);
const { options } = analysis.parseBuildOptions(buildOptions);
const configurations = analysis.createConfigurations(options, {
  host: analysis.currentHost(),
  platforms: analysis.platformDeclarationsFrom(graph),
});
const analyzer = new analysis.Analyzer(graph, { configurations, buildSettings: (l) => graph.buildSetting(l) });
let targets = 0;
for (const pkg of workspace.packagesUnder('')) {
  const p = loader.loadPackage('', pkg);
  for (const [name, t] of p.targets) {
    // `//...` in `bazel build` means the rules of each package.
    if (t.kind !== 'rule') continue;
    analyzer.analyzeFromPattern(`//${pkg}:${name}`);
    targets++;
  }
}
console.log(`${targets} targets, ${analyzer.actions().length} actions`);
