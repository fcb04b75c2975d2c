#!/usr/bin/env node
// Kiln's entry point. Kept tiny and dependency-free so that `kiln --version` costs one Node start:
// everything else is loaded only when a command needs it.
import { readFileSync } from 'node:fs';

const argv = process.argv.slice(2);
const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));

if (argv.length === 1 && argv[0] === '--version') {
  process.stdout.write(`kiln ${version}\n`);
} else {
  const { runCli, processCliIO, startSigtermRelay } = await import('../dist/bundle/kiln.js');
  const io = processCliIO(process, startSigtermRelay());
  process.exitCode = await runCli(argv, io, version);
  io.dispose();
}
