#!/usr/bin/env node
// The spawn floor of the build benchmark: the wall time of starting COUNT one-process commands,
// CONCURRENCY at a time, from Node (as a build tool must), with nothing else done per command. A
// build of COUNT one-process actions cannot beat it; the gap to it is the tool's per-action overhead.
// nativeSandboxFloorMs is the same inside Kiln's native sandbox, the floor of the sandboxed strategy.
//
//   node bench/build/spawn-floor.mjs COUNT CONCURRENCY [COMMAND...]   (default command: bash -c true)
// Prints the wall time in milliseconds.
import { spawn } from 'node:child_process';

export async function spawnFloorMs(count, concurrency, argv = ['bash', '-c', 'true']) {
  let started = 0;
  const worker = async () => {
    while (started < count) {
      started++;
      await new Promise((resolve, reject) => {
        const child = spawn(argv[0], argv.slice(1), { stdio: 'ignore' });
        child.on('error', reject);
        child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${argv.join(' ')} exited ${code}`))));
      });
    }
  };
  const t0 = process.hrtime.bigint();
  await Promise.all(Array.from({ length: concurrency }, worker));
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

/**
 * The same floor inside Kiln's native sandbox (dist/, after `npm run build`): COUNT `bash -c true`,
 * each in a sandbox of its own with the build's system steps and an empty working directory, or
 * NaN when this machine cannot run it.
 */
export async function nativeSandboxFloorMs(count, concurrency) {
  const { NativeSandboxRunner } = await import('../../dist/src/core/index.js');
  const runner = await NativeSandboxRunner.start();
  if (!(runner instanceof NativeSandboxRunner)) return NaN;
  const spec = {
    argv: ['bash', '-c', 'true'],
    cwd: '/work',
    env: { PATH: '/usr/bin:/bin' },
    tree: { mounts: [], dirs: ['/work'], symlinks: [] },
    stdout: { kind: 'buffer', limitBytes: 1024 },
    stderr: { kind: 'buffer', limitBytes: 1024 },
  };
  try {
    let started = 0;
    const worker = async () => {
      while (started < count) {
        started++;
        const r = await runner.run(spec);
        if (r.exitCode !== 0) throw new Error(`bash -c true in the native sandbox exited ${r.exitCode}: ${r.stderr}`);
      }
    };
    const t0 = process.hrtime.bigint();
    await Promise.all(Array.from({ length: concurrency }, worker));
    return Number(process.hrtime.bigint() - t0) / 1e6;
  } finally {
    await runner.close();
  }
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop())) {
  const [count, concurrency, ...argv] = process.argv.slice(2);
  if (!count || !concurrency) {
    console.error('usage: node bench/build/spawn-floor.mjs COUNT CONCURRENCY [COMMAND...]');
    process.exit(2);
  }
  console.log((await spawnFloorMs(Number(count), Number(concurrency), argv.length > 0 ? argv : undefined)).toFixed(0));
}
