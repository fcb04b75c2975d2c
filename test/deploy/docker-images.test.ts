import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { needTool } from '../setup/need-tool.js';

// deploy/docker/build.sh on the project's private engine: the scheduler image, built from the local
// base image with no network, runs Kiln and serves with no network either.
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const dockerHost = process.env['KILN_DOCKER_HOST'] ?? '';
const baseImage = process.env['KILN_BASE_IMAGE'] ?? '';
const haveDocker = needTool(
  'Docker',
  dockerHost !== '' && baseImage !== '',
  'KILN_DOCKER_HOST / KILN_BASE_IMAGE are unset; run scripts/test-setup.d/20-docker.sh',
);
const haveBuild = needTool('the built kiln (dist/)', existsSync(`${ROOT}dist/bundle/kiln.js`), 'npm run build');

const env = { ...process.env, DOCKER_HOST: dockerHost, KILN_BASE_IMAGE: baseImage };
const docker = (...args: string[]) => spawnSync('docker', args, { env, encoding: 'utf8' });

describe.skipIf(!haveDocker || !haveBuild)('deploy/docker/build.sh', () => {
  it('builds the scheduler image, which runs kiln --version and serves with --network none', { timeout: 600_000 }, async () => {
    const prefix = `kiln-test-${randomBytes(4).toString('hex')}`;
    const version = (JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { version: string }).version;
    onTestFinished(() => void docker('rmi', '-f', `${prefix}/scheduler:${version}`, `${prefix}/scheduler:latest`));
    const built = spawnSync('bash', [`${ROOT}deploy/docker/build.sh`, 'scheduler'], { env: { ...env, KILN_IMAGE_PREFIX: prefix }, encoding: 'utf8' });
    expect(built.status, built.stderr).toBe(0);
    const image = built.stdout.trim();
    expect(image).toBe(`${prefix}/scheduler:${version}`);
    expect(docker('image', 'inspect', '--format', '{{index .Config.Labels "kiln.base"}}', image).stdout.trim()).toBe(baseImage);

    const versionRun = docker('run', '--rm', '--network', 'none', '--entrypoint', 'kiln', image, '--version');
    expect(versionRun.status, versionRun.stderr).toBe(0);
    expect(versionRun.stdout.trim()).toBe(`kiln ${version}`);

    // The image's entrypoint is `kiln scheduler`: it loads grpc-js and the native zstd addon, opens
    // its stores and prints its endpoint (loopback only: the container has no network).
    const name = `${prefix}-scheduler`;
    const served = spawn('docker', ['run', '--rm', '--network', 'none', '--name', name, image, '--port', '0'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    onTestFinished(() => void docker('rm', '-f', name));
    const endpoint = await new Promise<string>((resolve, reject) => {
      let out = '';
      let err = '';
      served.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('\n')) resolve(out.split('\n')[0]!);
      });
      served.stderr.on('data', (d: Buffer) => (err += d.toString()));
      served.on('exit', (code) => reject(new Error(`the scheduler container exited with ${code}: ${err}`)));
    });
    expect(endpoint).toMatch(/^grpc:\/\/127\.0\.0\.1:\d+$/);
    const exited = new Promise((resolve) => served.on('exit', resolve));
    expect(docker('stop', '-t', '5', name).status).toBe(0);
    await exited;
  });
});
