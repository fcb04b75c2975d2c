import { cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { createConfigurations } from '../../src/analysis/config/build-configuration.js';
import { Analyzer } from '../../src/analysis/configured/analyzer.js';
import { LoadedTargetGraph } from '../../src/analysis/configured/loaded-target-graph.js';
import { platformDeclarationsFrom } from '../../src/analysis/configured/platform-declarations.js';
import { parseBuildOptions } from '../../src/analysis/options/parse-build-options.js';
import { readWorkspaceName } from '../../src/loading/index.js';
import { ModuleInfo } from '../../proto/gen/stardoc_output/index.js';
import { LINUX_X64 } from '../analysis/config/config-fixture.js';
import { workspaceFixture } from '../loading/fixture.js';
import { newLoader } from '../loading/load-helper.js';
import { readTextFormat } from './text-format-reader.js';

/**
 * Golden tests of starlark_doc_extract: each folder of golden/ holds a workspace (workspace/) and,
 * for each starlark_doc_extract target of its root package (and each label listed in an optional
 * `targets.txt`, for targets in other repositories), the expected `<name>.textproto` or, for a
 * target that must fail, `<name>.error` (the message). A golden file may open with `#` lines that
 * say which Bazel test case it transcribes; they are not compared. KILN_UPDATE_GOLDEN=1 rewrites the
 * rest of each file.
 */
const GOLDEN = join(import.meta.dirname, 'golden');
const UPDATE = process.env.KILN_UPDATE_GOLDEN === '1';
const PROTO = join(import.meta.dirname, '../../proto/stardoc_output/stardoc_output.proto');

/** Our .proto read by protobufjs directly (not through proto/gen), for the round-trip check. */
const moduleInfoType = protobuf.loadSync(PROTO).lookupType('stardoc_output.ModuleInfo');

/** The starlark_doc_extract targets a case's root BUILD file declares, then those targets.txt lists. */
function extractTargets(dir: string): string[] {
  const build = readFileSync(join(dir, 'workspace', 'BUILD'), 'utf8');
  const local = [...build.matchAll(/starlark_doc_extract\(\s*name = "([^"]+)"/g)].map((m) => `//:${m[1]!}`);
  const listed = join(dir, 'targets.txt');
  const others = existsSync(listed)
    ? readFileSync(listed, 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '')
    : [];
  return [...local, ...others];
}

/** `//:extract` -> `extract`, `@dep//:extract` -> `dep_extract`: the golden files' base name. */
const goldenName = (label: string) =>
  label
    .replace(/^\/\/:/, '')
    .replace(/^@+/, '')
    .replace(/\/\/:?/, '_');

function analyzerFor(dir: string): Analyzer {
  const root = workspaceFixture({});
  cpSync(join(dir, 'workspace'), root, { recursive: true });
  const loader = newLoader(root);
  const graph = new LoadedTargetGraph(loader);
  const configurations = createConfigurations(parseBuildOptions([]).options, { host: LINUX_X64, platforms: platformDeclarationsFrom(graph) });
  const analyzer = new Analyzer(graph, { configurations, workspaceName: readWorkspaceName(root) });
  expect(loader.loadPackage('', '').errors).toEqual([]);
  return analyzer;
}

/** The golden file's leading `#` lines: where in Bazel's tests the expectation comes from. */
function provenanceOf(text: string): string {
  return /^(#[^\n]*\n)*/.exec(text)![0];
}

function check(path: string, actual: string): void {
  const header = existsSync(path) ? provenanceOf(readFileSync(path, 'utf8')) : '';
  if (UPDATE) writeFileSync(path, header + actual);
  expect(header + actual).toBe(readFileSync(path, 'utf8'));
}

describe.each(
  readdirSync(GOLDEN)
    .filter((d) => existsSync(join(GOLDEN, d, 'workspace')))
    .sort(),
)('starlark_doc_extract golden %s', (name) => {
  const dir = join(GOLDEN, name);
  it.each(extractTargets(dir))('%s', (label) => {
    // Each target gets a fresh workspace: temp dirs are removed after each test.
    const analyzer = analyzerFor(dir);
    const target = goldenName(label);
    const outputName = label.slice(label.lastIndexOf(':') + 1);
    let ct;
    try {
      ct = analyzer.analyzeTopLevel(label);
    } catch (e) {
      const errorFile = join(dir, `${target}.error`);
      if (!UPDATE && !existsSync(errorFile)) throw e;
      check(errorFile, `${(e as Error).message}\n`);
      return;
    }
    const binaryAction = ct.actions.find((a) => a.outputs[0]!.execPath.endsWith(`/${outputName}.binaryproto`))!;
    const textAction = ct.actions.find((a) => a.outputs[0]!.execPath.endsWith(`/${outputName}.textproto`))!;
    expect(ct.files.map((f) => f.artifact.execPath)).toEqual([binaryAction.outputs[0]!.execPath]);
    if (binaryAction.inProcess?.kind !== 'write_binary' || textAction.inProcess?.kind !== 'write') throw new Error('expected in-process writes');
    const binary = Buffer.from(binaryAction.inProcess.base64, 'base64');
    const text = textAction.inProcess.content;
    check(join(dir, `${target}.textproto`), text);

    // The text output holds the same message as the binary one.
    expect(ModuleInfo.encode(readTextFormat(ModuleInfo.type, text))).toEqual(binary);
    // The binary parses with protobufjs against our .proto and re-encodes to the same bytes.
    const decoded = moduleInfoType.decode(binary);
    expect(Buffer.from(moduleInfoType.encode(decoded).finish())).toEqual(binary);
  });
});
