import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Docker from 'dockerode';
import { UnavailableError } from '../src/core/index.js';
import { KILN_BASE_IMAGE } from './runners/docker-runner.js';

const RECIPE = join('deploy', 'base-image', 'build.sh');

/** The repository's deploy/base-image/build.sh, found from this module (src or dist tree). */
function recipePath(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, RECIPE))) return join(dir, RECIPE);
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

function dockerOf(dockerHost: string): Docker {
  if (dockerHost.startsWith('unix://')) return new Docker({ socketPath: dockerHost.slice('unix://'.length) });
  const url = new URL(dockerHost.replace(/^tcp:/, 'http:'));
  return new Docker({ host: url.hostname, port: Number(url.port) });
}

/**
 * Makes sure Kiln's base image (the default `container-image`) exists in the engine, building it
 * with deploy/base-image/build.sh when missing: a one-time cost, reported through `log`.
 */
export async function ensureBaseImage(dockerHost: string, log: (message: string) => void): Promise<void> {
  try {
    await dockerOf(dockerHost).getImage(KILN_BASE_IMAGE).inspect();
    return;
  } catch (e) {
    if ((e as { statusCode?: number }).statusCode !== 404) throw new UnavailableError(`cannot inspect ${KILN_BASE_IMAGE}: ${(e as Error).message}`);
  }
  const recipe = recipePath();
  if (!recipe) throw new UnavailableError(`${KILN_BASE_IMAGE} is missing and ${RECIPE} was not found to build it`);
  log(`${KILN_BASE_IMAGE} is missing: building it once with ${recipe}`);
  const started = Date.now();
  const output: string[] = [];
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn('bash', [recipe], { env: { ...process.env, DOCKER_HOST: dockerHost }, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (d: Buffer) => output.push(d.toString()));
    child.stderr.on('data', (d: Buffer) => output.push(d.toString()));
    child.on('error', reject);
    child.on('close', resolve);
  });
  if (code !== 0) throw new UnavailableError(`building ${KILN_BASE_IMAGE} failed (exit ${code}): ${output.join('').trim().split('\n').slice(-5).join(' | ')}`);
  log(`${KILN_BASE_IMAGE} built in ${((Date.now() - started) / 1000).toFixed(1)}s`);
}
