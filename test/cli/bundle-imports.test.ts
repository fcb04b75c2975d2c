import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { needTool } from '../setup/need-tool.js';

const BUNDLE = fileURLToPath(new URL('../../dist/bundle', import.meta.url));
// The bundle exists after `npm run build`, which the test script runs first.
const BUILT = needTool('the built kiln (dist/)', existsSync(join(BUNDLE, 'kiln.js')), 'npm run build');

/**
 * The packages a command's chunk loads before any of its code runs: its static imports, transitively
 * (Node's built-in modules as `node:name`).
 */
function packagesLoadedBy(command: string): Set<string> {
  const entry = readdirSync(BUNDLE).find((name) => name.startsWith(`${command}-`) && name.endsWith('.js'));
  if (!entry) throw new Error(`no chunk for the ${command} command in ${BUNDLE}`);
  const packages = new Set<string>();
  const seen = new Set<string>();
  const visit = (chunk: string) => {
    if (seen.has(chunk)) return;
    seen.add(chunk);
    const text = readFileSync(join(BUNDLE, chunk), 'utf8');
    // Static imports only: `import("./x.js")` is loaded when it runs, not with the chunk.
    for (const m of text.matchAll(/(?:^|[\n;])\s*(?:import|export)\s*(?:[^"'();]*?\bfrom\s*)?["']([^"']+)["']/g)) {
      const spec = m[1]!;
      if (spec.startsWith('./')) visit(spec.slice(2));
      else packages.add(spec);
    }
  };
  visit(entry);
  return packages;
}

describe.skipIf(!BUILT)('what a command loads at start', () => {
  it('build, test and run load no gRPC (the remote half is imported only with a remote flag); query loads neither gRPC nor zstd', () => {
    for (const command of ['build', 'test', 'run']) expect([...packagesLoadedBy(command)], command).not.toContain('@grpc/grpc-js');
    const query = packagesLoadedBy('query');
    expect([...query]).not.toContain('@grpc/grpc-js');
    expect([...query]).not.toContain('zstd-napi');
  });

  it('query loads no sandbox, blob store or hashing: no child_process, no crypto (loaded when first used)', () => {
    const query = [...packagesLoadedBy('query')];
    for (const builtin of ['node:child_process', 'node:crypto', 'node:net']) expect(query).not.toContain(builtin);
  });

  it('a remote command does load gRPC, and build the sandbox (the check sees static imports)', () => {
    expect([...packagesLoadedBy('scheduler')]).toContain('@grpc/grpc-js');
    expect([...packagesLoadedBy('build')]).toContain('node:child_process');
  });
});
