import { describe, expect, it } from 'vitest';
import { createConfigurations } from '../../../src/analysis/config/build-configuration.js';
import { Analyzer } from '../../../src/analysis/configured/analyzer.js';
import { LoadedTargetGraph } from '../../../src/analysis/configured/loaded-target-graph.js';
import { platformDeclarationsFrom } from '../../../src/analysis/configured/platform-declarations.js';
import { parseBuildOptions } from '../../../src/analysis/options/parse-build-options.js';
import { workspaceFixture } from '../../loading/fixture.js';
import { newLoader } from '../../loading/load-helper.js';
import { SELECT_WORKSPACE } from '../../loading/select-fixture.js';
import { LINUX_X64 } from '../config/config-fixture.js';

// select() from a BUILD file through Kiln's real loader to analysis: the value loading made is the
// one analysis resolves. Files and messages as Bazel 2.1.0 gave them (`bazel --batch build`; file order
// read from a genrule's $(SRCS) over each filegroup).
function files(target: string, args: string[] = []): string[] {
  const root = workspaceFixture(SELECT_WORKSPACE);
  const graph = new LoadedTargetGraph(newLoader(root));
  const configurations = createConfigurations(parseBuildOptions(args).options, { host: LINUX_X64, platforms: platformDeclarationsFrom(graph) });
  const analyzer = new Analyzer(graph, { configurations, buildSettings: (l) => graph.buildSetting(l) });
  return analyzer.analyzeTopLevel(target).files.map((f) => f.artifact.execPath);
}

describe('a loaded select() resolved by analysis', () => {
  it('concatenates lists and selects in order, in each configuration', () => {
    expect(files('//p:left')).toEqual(['p/a.txt', 'p/d.txt']);
    expect(files('//p:left', ['-c', 'opt'])).toEqual(['p/a.txt', 'p/o.txt']);
    expect(files('//p:right', ['-c', 'opt'])).toEqual(['p/o.txt', 'p/b.txt']);
    expect(files('//p:both')).toEqual(['p/a.txt', 'p/d.txt', 'p/b.txt']);
    expect(files('//p:both', ['-c', 'opt'])).toEqual(['p/a.txt', 'p/o.txt', 'p/c.txt', 'p/b.txt']);
    expect(files('//p:macro', ['-c', 'opt'])).toEqual(['p/o.txt', 'p/m.txt']);
  });

  it('no_match_error is the message when no condition matches', () => {
    expect(() => files('//p:nm')).toThrow('Configurable attribute "srcs" doesn\'t match this configuration: build with -c opt');
    expect(files('//p:nm', ['-c', 'opt'])).toEqual(['p/a.txt', 'p/o.txt']);
  });
});
