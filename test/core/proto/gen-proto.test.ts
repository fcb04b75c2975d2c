import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const temp = mkdtempSync(join(tmpdir(), 'kiln-gen-proto-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

function generate(out: string): void {
  execFileSync(process.execPath, [join(ROOT, 'scripts/gen-proto.mjs'), '--out', out], { stdio: 'pipe' });
}

function tree(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const full = join(d, name);
      if (statSync(full).isDirectory()) walk(full);
      else files.set(relative(dir, full), readFileSync(full, 'utf8'));
    }
  };
  walk(dir);
  return files;
}

describe('scripts/gen-proto.mjs', () => {
  it('generates the same bytes every time, and proto/gen is up to date (else run npm run gen:proto)', () => {
    generate(join(temp, 'a'));
    generate(join(temp, 'b'));
    const a = tree(join(temp, 'a'));
    expect(tree(join(temp, 'b'))).toEqual(a);
    expect([...a.keys()]).toEqual(
      expect.arrayContaining([
        'build/bazel/remote/execution/v2/index.ts',
        'build/bazel/semver/index.ts',
        'descriptor.ts',
        'google/bytestream/index.ts',
        'google/longrunning/index.ts',
        'google/protobuf/index.ts',
        'google/rpc/index.ts',
        'runtime.ts',
      ]),
    );
    expect(tree(join(ROOT, 'proto/gen'))).toEqual(a);
  });
});
