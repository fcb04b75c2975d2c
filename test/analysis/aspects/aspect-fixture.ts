import { createConfigurations } from '../../../src/analysis/config/build-configuration.js';
import { Analyzer } from '../../../src/analysis/configured/analyzer.js';
import { LoadedTargetGraph } from '../../../src/analysis/configured/loaded-target-graph.js';
import { platformDeclarationsFrom } from '../../../src/analysis/configured/platform-declarations.js';
import { parseBuildOptions } from '../../../src/analysis/options/parse-build-options.js';
import { StarlarkAspect } from '../../../src/loading/index.js';
import { workspaceFixture } from '../../loading/fixture.js';
import { newLoader } from '../../loading/load-helper.js';
import { LINUX_X64 } from '../config/config-fixture.js';

/** An analyzer over a workspace of `files`, with what `print()` said and the warnings. */
export function analyzerFor(files: Record<string, string>, args: string[] = []) {
  const root = workspaceFixture({ WORKSPACE: '', ...files });
  const graph = new LoadedTargetGraph(newLoader(root));
  const configurations = createConfigurations(parseBuildOptions(args).options, { host: LINUX_X64, platforms: platformDeclarationsFrom(graph) });
  const printed: string[] = [];
  const warnings: string[] = [];
  const analyzer = new Analyzer(graph, {
    configurations,
    buildSettings: (l) => graph.buildSetting(l),
    debug: (m) => printed.push(m),
    warn: (m) => warnings.push(m),
  });
  const aspect = (key: string) => {
    const [bzl, name] = key.split('%') as [string, string];
    const v = graph.bzlModule(bzl).globals.get(name);
    if (!(v instanceof StarlarkAspect)) throw new Error(`${key} is not an aspect`);
    return v;
  };
  return { analyzer, graph, printed, warnings, aspect };
}

/** The message of what `fn` throws. */
export function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('no error');
}

/** The content of every file a `ctx.actions.write` action of `actions` writes, by exec path suffix. */
export function writtenContents(
  actions: readonly { readonly mnemonic: string; readonly outputs: readonly { readonly execPath: string }[] }[],
): Map<string, string> {
  const out = new Map<string, string>();
  for (const a of actions) {
    const work = (a as { inProcess?: { content?: string } }).inProcess;
    if (a.mnemonic === 'FileWrite' && typeof work?.content === 'string') out.set(a.outputs[0]!.execPath.replace(/^bazel-out\/[^/]+\/bin\//, ''), work.content);
  }
  return out;
}
