#!/usr/bin/env node
// Kiln's entry point. Kept tiny and dependency-free so that `kiln --version` costs one Node start:
// everything else is loaded only when a command needs it.
import { readFileSync } from 'node:fs';

const argv = process.argv.slice(2);
const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));

if (argv.length === 1 && (argv[0] === '--version' || argv[0] === 'version')) {
  process.stdout.write(`kiln ${version}\n`);
} else {
  const { runCli } = await import('../dist/bundle/kiln.js');
  let onInterrupt;
  const interrupted = new Promise((resolve) => (onInterrupt = resolve));
  process.once('SIGINT', onInterrupt);
  process.once('SIGTERM', onInterrupt);
  const io = { stdout: process.stdout, stderr: process.stderr, cwd: process.cwd(), env: process.env, interrupted };
  process.exitCode = await runCli(argv, io, version);
  process.removeListener('SIGINT', onInterrupt);
  process.removeListener('SIGTERM', onInterrupt);
}
