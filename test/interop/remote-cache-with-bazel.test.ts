import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCacheServerConfig, startCacheServer, type CacheServer } from '../../scheduler/index.js';
import { BAZEL_2, BAZEL_2_MISSING, runBazel2 } from '../setup/bazel-2.js';
import { needTool } from '../setup/need-tool.js';

// Bazel 2.1.0, installed by scripts/test-setup.d/30-bazel.sh, builds a genrule workspace against
// Kiln's cache server; after `bazel clean` the rebuild must run nothing and hit the cache for all.

const BUILD = `
genrule(name = "hello", outs = ["hello.txt"], cmd = "echo hello from kiln > $@")
genrule(name = "twice", srcs = [":hello"], outs = ["twice.txt"], cmd = "cat $< $< > $@")
genrule(name = "pair", srcs = ["input.txt"], outs = ["upper.txt", "count.txt"],
        cmd = "tr a-z A-Z < $< > $(location upper.txt) && wc -c < $< > $(location count.txt)")
genrule(name = "big", outs = ["big.bin"], cmd = "head -c 6000000 /dev/zero | tr '\\\\0' k > $@")
genrule(name = "digest", srcs = [":big", ":twice"], outs = ["digest.txt"], cmd = "cat $(SRCS) | wc -c > $@")
genrule(name = "empty", outs = ["empty.txt"], cmd = "touch $@")
`;
const OUTPUTS = ['hello.txt', 'twice.txt', 'upper.txt', 'count.txt', 'big.bin', 'digest.txt', 'empty.txt'];
const ACTIONS = 6;

describe('Bazel 2.1.0 against kiln cache server', () => {
  if (!needTool('Bazel 2.1.0', BAZEL_2 !== '', BAZEL_2_MISSING)) return;
  let root: string;
  let server: CacheServer;

  const run = (args: string[]) => runBazel2(root, args);

  const readOutputs = async (): Promise<Map<string, Buffer>> =>
    new Map(await Promise.all(OUTPUTS.map(async (f) => [f, await readFile(join(root, 'ws', 'bazel-bin', f))] as const)));

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'kiln-bazel-interop-'));
    await Promise.all(['ws', 'home', 'tmp'].map((d) => mkdir(join(root, d))));
    await writeFile(join(root, 'ws', 'WORKSPACE'), 'workspace(name = "interop")\n');
    await writeFile(join(root, 'ws', 'BUILD'), BUILD);
    await writeFile(join(root, 'ws', 'input.txt'), 'some input for the pair rule\n');
    // A batch limit below the big output makes Bazel use ByteStream for it and batches for the rest.
    const config = parseCacheServerConfig({ limits: { maxBatchTotalSizeBytes: 1024 * 1024 } }, 'interop', root, { host: '127.0.0.1', port: 0 });
    server = await startCacheServer(config, { log: { info: () => undefined, warn: () => undefined } });
  });

  afterAll(async () => {
    await server?.close();
    if (root) {
      await run(['shutdown']).catch(() => undefined);
      // Bazel makes its install tree read-only.
      await new Promise((resolve) => spawn('chmod', ['-R', 'u+w', root], { stdio: 'ignore' }).on('close', resolve));
      await rm(root, { recursive: true, force: true });
    }
  });

  it('serves every action of a clean rebuild from the remote cache, byte for byte', { timeout: 600_000 }, async () => {
    const flags = ['--remote_cache=' + server.endpoint, '--remote_timeout=60', '--noshow_progress', '--color=no', '--curses=no'];
    const first = await run(['build', ...flags, '//...']);
    expect(first.code, first.output).toBe(0);
    expect(first.output).toMatch(new RegExp(`INFO: ${ACTIONS} processes: ${ACTIONS} (linux-sandbox|processwrapper-sandbox|local)`));
    const before = await readOutputs();
    expect(before.get('big.bin')!.length).toBe(6_000_000);

    const clean = await run(['clean']);
    expect(clean.code, clean.output).toBe(0);

    const second = await run(['build', ...flags, '//...']);
    expect(second.code, second.output).toBe(0);
    const hits = /INFO: (\d+) processes: (\d+) remote cache hit/.exec(second.output);
    expect(hits, second.output).not.toBeNull();
    expect(Number(hits![1])).toBe(ACTIONS);
    expect(Number(hits![2])).toBe(ACTIONS);
    const after = await readOutputs();
    for (const f of OUTPUTS) expect(after.get(f)!.equals(before.get(f)!), f).toBe(true);
  });
});
