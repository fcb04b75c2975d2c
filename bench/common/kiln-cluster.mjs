// Shared by the remote benchmarks: `kiln cluster up` as a child process.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';

/** Starts `kiln cluster up ARGS` and resolves with its endpoint (the first line of its stdout) and the child. */
export function startKilnCluster(kiln, args) {
  const child = spawn(kiln, ['cluster', 'up', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolveEndpoint, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`kiln cluster up exited ${code} before printing its endpoint`)));
    createInterface({ input: child.stdout }).once('line', (line) => resolveEndpoint({ endpoint: line.trim(), child }));
  });
}

/** Interrupts the cluster (as Ctrl-C) and waits for it to exit. */
export async function stopKilnCluster(cluster) {
  if (!cluster) return;
  cluster.child.kill('SIGINT');
  if (cluster.child.exitCode === null) await once(cluster.child, 'exit');
}
