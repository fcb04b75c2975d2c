import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createConfigurations } from '../../../src/analysis/config/build-configuration.js';
import { Analyzer } from '../../../src/analysis/configured/analyzer.js';
import { LoadedTargetGraph } from '../../../src/analysis/configured/loaded-target-graph.js';
import { platformDeclarationsFrom } from '../../../src/analysis/configured/platform-declarations.js';
import { parseBuildOptions } from '../../../src/analysis/options/parse-build-options.js';
import { workspaceFixture, writeFiles } from '../../loading/fixture.js';
import { newLoader } from '../../loading/load-helper.js';
import { LINUX_X64 } from '../config/config-fixture.js';

/** The workspace Bazel 2.1.0 ran (bazel-2.1.0/workspace), and what it printed (`<name>.recorded.txt`). */
export const BAZEL_DIR = join(import.meta.dirname, 'bazel-2.1.0');

export function recorded(name: string): string[] {
  return readFileSync(join(BAZEL_DIR, `${name}.recorded.txt`), 'utf8')
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('#'));
}

/** A temp copy of the recorded workspace (plus extra files), analysed with Kiln's real loader. */
export function analyzerFor(args: string[] = [], extra: Record<string, string> = {}) {
  const root = workspaceFixture({});
  cpSync(join(BAZEL_DIR, 'workspace'), root, { recursive: true });
  writeFiles(root, extra);
  const events: string[] = [];
  const loader = newLoader(root, events);
  const graph = new LoadedTargetGraph(loader);
  const configurations = createConfigurations(parseBuildOptions(args).options, { host: LINUX_X64, platforms: platformDeclarationsFrom(graph) });
  const debug: string[] = [];
  /** DEBUG lines as Bazel prints them (`file:line:col: message`). */
  const debugLines: string[] = [];
  const analyzer = new Analyzer(graph, {
    configurations,
    buildSettings: (l) => graph.buildSetting(l),
    debug: (m, where) => {
      debug.push(m);
      debugLines.push(`DEBUG: ${where}: ${m}`);
    },
  });
  return { analyzer, debug, debugLines, events, root, configurations };
}

/** The first error Bazel reported for a package, blank lines kept, without `ERROR: `. */
export function recordedError(name: string): string {
  const text = readFileSync(join(BAZEL_DIR, `${name}.recorded.txt`), 'utf8');
  const start = text.indexOf('ERROR: ');
  const end = text.indexOf('\nERROR: ', start + 1);
  return text.slice(start + 'ERROR: '.length, end < 0 ? undefined : end);
}
