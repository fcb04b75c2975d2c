// Times `kiln --version` (the CLI's cold start) against a bare `node -e 0` baseline, in one run.
// Goal: median under 100 ms on the project's machine. Not a test: it prints figures.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const runs = Number(process.env.RUNS ?? 30);
const kiln = fileURLToPath(new URL('../../bin/kiln', import.meta.url));

function medianMs(command, argv) {
  const times = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    const r = spawnSync(command, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    if (r.status !== 0) throw new Error(`${argv.join(' ')} exited ${r.status}`);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

// The launcher moves NODE_EXTRA_CA_CERTS out of Node's way (see bin/kiln); show what that saves.
const baseline = medianMs(process.execPath, ['-e', '0']);
const bare = medianMs('env', ['-u', 'NODE_EXTRA_CA_CERTS', process.execPath, '-e', '0']);
const version = medianMs(kiln, ['--version']);
const help = medianMs(kiln, ['help']);
console.log(`node -e 0        median ${baseline.toFixed(1)} ms  (NODE_EXTRA_CA_CERTS ${process.env.NODE_EXTRA_CA_CERTS ? 'set' : 'unset'})`);
console.log(`kiln --version   median ${version.toFixed(1)} ms  (goal < 100 ms: ${version < 100 ? 'met' : 'NOT met'})`);
console.log(`kiln help        median ${help.toFixed(1)} ms  (loads the CLI dispatcher)`);
console.log(`node -e 0 without NODE_EXTRA_CA_CERTS  median ${bare.toFixed(1)} ms`);
console.log(`kiln --version over the bare node start: ${(version - bare).toFixed(1)} ms (${runs} runs each)`);
