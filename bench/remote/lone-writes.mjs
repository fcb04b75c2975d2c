#!/usr/bin/env node
// The CPU of writing a downloaded file that arrives alone in its event-loop turn, as most outputs of a
// cold remote build do: through the file writer thread (src/remote/file-writer-thread.ts) against
// writeFileAtomicallySync on the calling thread. Process CPU (both threads) per file, N files, one per
// turn, the two ways alternating R rounds. Needs `npm run build` (dist/).
//
//   node bench/remote/lone-writes.mjs [--files=1000] [--rounds=3]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const flags = { files: 1000, rounds: 3 };
for (const a of process.argv.slice(2)) {
  const m = /^--(files|rounds)=(\d+)$/.exec(a);
  if (!m) throw new Error(`unknown argument ${a}`);
  flags[m[1]] = Number(m[2]);
}
const { FileWriterThread } = await import(join(REPO, 'dist/src/remote/file-writer-thread.js'));
const { writeFileAtomicallySync } = await import(join(REPO, 'dist/src/remote/atomic-file-write.js'));

const data = Buffer.from('one output\n');
const nextTurn = () => new Promise((r) => setImmediate(r));

async function cpuPerFile(write) {
  const dir = mkdtempSync(join(tmpdir(), 'kiln-bench-lone-writes-'));
  try {
    const cpu = process.cpuUsage();
    for (let i = 0; i < flags.files; i++) {
      await write(join(dir, `f${i}`));
      await nextTurn();
    }
    const used = process.cpuUsage(cpu);
    return (used.user + used.system) / flags.files;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const writer = new FileWriterThread();
if ((await writer.whenReady()) !== 'online') throw new Error('the file writer thread did not start (npm run build?)');
const ways = { 'writer thread': (p) => writer.write(p, data, 0o644), 'calling thread': async (p) => writeFileAtomicallySync(p, data, 0o644) };
const results = Object.fromEntries(Object.keys(ways).map((k) => [k, []]));
for (let round = 1; round <= flags.rounds; round++) {
  for (const [name, write] of Object.entries(ways)) {
    const us = await cpuPerFile(write);
    results[name].push(us);
    console.log(`  round ${round}  ${name.padEnd(14)} ${us.toFixed(0).padStart(5)} us of CPU per file`);
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const [name, xs] of Object.entries(results)) console.log(`median ${name.padEnd(14)} ${median(xs).toFixed(0)} us of CPU per file`);
await writer.close();
