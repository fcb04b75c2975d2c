import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Docker from 'dockerode';
import { FailedPreconditionError, UnavailableError } from '../src/core/index.js';
import { dockerConnection, KILN_BASE_IMAGE } from './runners/docker-runner.js';

const RECIPE_DIRECTORY = join('deploy', 'base-image');
const RECIPE_FILES = ['build.sh', 'packages.txt'];

/** The repository's deploy/base-image, found from this module (src or dist tree). */
function recipeDirectory(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, RECIPE_DIRECTORY, 'build.sh'))) return join(dir, RECIPE_DIRECTORY);
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/**
 * The tag build.sh gives the image of this recipe: `kiln/base:` and the first 16 hex digits of the
 * SHA-256 of build.sh and packages.txt, concatenated (build.sh computes the same).
 */
export function baseImageTag(recipe: string): string {
  const hash = createHash('sha256');
  for (const file of RECIPE_FILES) hash.update(readFileSync(join(recipe, file)));
  return `${KILN_BASE_IMAGE.split(':')[0]}:${hash.digest('hex').slice(0, 16)}`;
}

function dockerOf(dockerHost: string): Docker {
  return new Docker(dockerConnection(dockerHost));
}

/** Whether the engine has `image`; an engine that does not answer is an UnavailableError. */
async function hasImage(docker: Docker, image: string): Promise<boolean> {
  try {
    await docker.getImage(image).inspect();
    return true;
  } catch (e) {
    if ((e as { statusCode?: number }).statusCode === 404) return false;
    throw new UnavailableError(`cannot inspect ${image}: ${(e as Error).message}`);
  }
}

/**
 * The docker runner's default image (the image of actions without a `container-image` property):
 * Kiln's base image of this checkout's recipe, built once with deploy/base-image/build.sh when the
 * engine lacks it (a one-time cost, reported through `log`); `kiln/base:latest` where the recipe is
 * not at hand (an installed executor), which must then exist.
 */
export async function ensureBaseImage(dockerHost: string, log: (message: string) => void): Promise<string> {
  const docker = dockerOf(dockerHost);
  const recipe = recipeDirectory();
  if (!recipe) {
    if (await hasImage(docker, KILN_BASE_IMAGE)) return KILN_BASE_IMAGE;
    throw new UnavailableError(`${KILN_BASE_IMAGE} is missing and ${join(RECIPE_DIRECTORY, 'build.sh')} was not found to build it`);
  }
  const image = baseImageTag(recipe);
  if (await hasImage(docker, image)) return image;
  const script = join(recipe, 'build.sh');
  log(`${image} is missing: building it once with ${script}`);
  const started = Date.now();
  const output: string[] = [];
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn('bash', [script], { env: { ...process.env, DOCKER_HOST: dockerHost }, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (d: Buffer) => output.push(d.toString()));
    child.stderr.on('data', (d: Buffer) => output.push(d.toString()));
    child.on('error', reject);
    child.on('close', resolve);
  });
  if (code !== 0) throw new UnavailableError(`building ${image} failed (exit ${code}): ${output.join('').trim().split('\n').slice(-5).join(' | ')}`);
  log(`${image} built in ${((Date.now() - started) / 1000).toFixed(1)}s`);
  return image;
}

/**
 * The docker runner's default image: `requested` (an operator's `--image`), which must be in the engine
 * (a FailedPreconditionError names it otherwise, as nothing can be pulled), else ensureBaseImage's.
 */
export async function defaultImageOf(dockerHost: string, requested: string | undefined, log: (message: string) => void): Promise<string> {
  if (requested === undefined) return ensureBaseImage(dockerHost, log);
  if (!(await hasImage(dockerOf(dockerHost), requested))) {
    throw new FailedPreconditionError(
      `container image '${requested}' is not in the Docker engine at ${dockerHost}; no registry is reachable, so build or load it there first (docker import, docker load, or docker tag)`,
    );
  }
  return requested;
}
