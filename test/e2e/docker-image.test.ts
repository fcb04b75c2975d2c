import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBaseImage } from '../../executor/index.js';
import { needTool } from '../setup/need-tool.js';
import { E2eWorkspace } from './e2e-workspace.js';
import { startKilnCluster } from './kiln-cluster.js';

/**
 * The docker runner's images end to end: `kiln build --remote_executor` against `kiln cluster up
 * --runner docker`, with Kiln's base image (the tools a genrule on a Linux host expects), another
 * image through `--image`, and one through the `container-image` property in both of its forms.
 */
const dockerHost = process.env['KILN_DOCKER_HOST'];
const env = { ...process.env, DOCKER_HOST: dockerHost };
const summary = (stderr: string) => /INFO: \d+ process(?:es)?[:.][^\n]*/.exec(stderr)?.[0];

/** One line per tool, each computed by that tool inside the action's container. */
const TOOLS_CMD = [
  'd=$$(mktemp -d)',
  'mkdir $$d/t && echo hi > $$d/t/f',
  '{',
  '  echo "rev: $$(echo kiln | rev)"',
  "  printf 'a 1\\nbbb 22\\n' | column -t",
  '  echo "find: $$(find pkg -name in.txt)"',
  '  echo "diff: $$(diff <(echo x) <(echo y) | tail -n +2 | tr "\\n" " ")"',
  '  echo "grep: $$(grep -c hello $(location in.txt))"',
  '  echo "sed: $$(echo kiln | sed s/k/K/)"',
  "  echo \"awk: $$(echo 6 7 | awk '{ print $$1 * $$2 }') $$(awk --version | grep -c 'GNU Awk')\"",
  '  echo "tar: $$(tar -C $$d -cf $$d/t.tar t && tar -tf $$d/t.tar | sort | tr "\\n" " ")"',
  '  echo "gzip: $$(echo gz | gzip | gzip -d)"',
  '  echo "xz: $$(echo xz | xz | xz -d)"',
  '  echo "zip: $$(cd $$d && zip -q z.zip t/f && unzip -p z.zip t/f)"',
  '  echo "file: $$(file -b --mime-type $$d/t.tar)"',
  '  echo "python3: $$(python3 -c \'print(6 * 7)\')"',
  '  echo "perl: $$(perl -e \'print 6 * 7\')"',
  '} > $@',
].join('\n');

const TOOLS_OUT = [
  'rev: nlik',
  'a    1',
  'bbb  22',
  'find: pkg/in.txt',
  'diff: < x --- > y ',
  'grep: 1',
  'sed: Kiln',
  'awk: 42 1',
  'tar: t/ t/f ',
  'gzip: gz',
  'xz: xz',
  'zip: hi',
  'file: application/x-tar',
  'python3: 42',
  'perl: 42',
  '',
].join('\n');

function workspace(marker: string): E2eWorkspace {
  return new E2eWorkspace({
    'MODULE.bazel': 'module(name = "images")\n',
    'pkg/in.txt': 'hello\n',
    'pkg/BUILD': [
      `genrule(name = "tools", srcs = ["in.txt"], outs = ["tools.txt"], cmd = """${TOOLS_CMD}""")`,
      'genrule(name = "marker", outs = ["marker.txt"], cmd = "cat /etc/kiln-image-marker > $@")',
      `genrule(name = "marker_by_property", outs = ["marker_by_property.txt"], cmd = "cat /etc/kiln-image-marker > $@", exec_properties = {"container-image": "${marker}"})`,
      '',
    ].join('\n'),
  });
}

if (needTool('Docker', dockerHost !== undefined, 'KILN_DOCKER_HOST is not set: run scripts/test-setup.d/20-docker.sh (or npm test)')) {
  describe('kiln cluster up --runner docker: images', () => {
    let base: string;
    // An image of our own, from the base image: a second tag would be indistinguishable inside.
    const marker = `kiln/test-marker:${process.pid}`;
    let context: string;

    beforeAll(async () => {
      base = await ensureBaseImage(dockerHost!, () => undefined);
      context = mkdtempSync(join(tmpdir(), 'kiln-image-context-'));
      writeFileSync(join(context, 'marker'), `${marker}\n`);
      writeFileSync(join(context, 'Dockerfile'), `FROM ${base}\nCOPY marker /etc/kiln-image-marker\n`);
      const built = spawnSync('docker', ['build', '-q', '-t', marker, context], { env: { ...env, DOCKER_BUILDKIT: '0' }, encoding: 'utf8' });
      expect(built.status, built.stderr).toBe(0);
    }, 600_000);
    afterAll(() => {
      spawnSync('docker', ['rmi', '-f', marker], { env, stdio: 'ignore' });
      rmSync(context, { recursive: true, force: true });
    });

    it('builds a genrule that uses rev, column, find, diff, grep, sed, awk, tar, gzip, xz, zip, unzip, file, python3 and perl on the base image', {
      timeout: 300_000,
    }, async () => {
      const cluster = await startKilnCluster(['--executors', '1', '--runner', 'docker'], process.cwd(), env);
      const ws = workspace(marker);
      const built = await ws.kiln(['build', `--remote_executor=${cluster.endpoint}`, '//pkg:tools']);
      expect(built.code, built.stderr).toBe(0);
      expect(summary(built.stderr)).toBe('INFO: 1 process: 1 remote.');
      expect(ws.read('kiln-bin/pkg/tools.txt')).toBe(TOOLS_OUT);
      // Without the property or --image, the actions ran on this checkout's base image (not an older kiln/base:latest).
      expect(base).toMatch(/^kiln\/base:[0-9a-f]{16}$/);
      const absent = await ws.kiln(['build', `--remote_executor=${cluster.endpoint}`, '//pkg:marker']);
      expect(absent.code).not.toBe(0);
      expect(absent.stderr).toContain('/etc/kiln-image-marker: No such file or directory');
    });

    it('cluster up --image NAME runs actions without a container-image property on that image; a missing one is refused at start', {
      timeout: 120_000,
    }, async () => {
      const cluster = await startKilnCluster(['--executors', '1', '--runner', 'docker', '--image', marker], process.cwd(), env);
      const ws = workspace(marker);
      const built = await ws.kiln(['build', `--remote_executor=${cluster.endpoint}`, '//pkg:marker']);
      expect(built.code, built.stderr).toBe(0);
      expect(ws.read('kiln-bin/pkg/marker.txt')).toBe(`${marker}\n`);
      await expect(startKilnCluster(['--executors', '1', '--runner', 'docker', '--image', 'kiln/no-such-image:1'], process.cwd(), env)).rejects.toThrow(
        /container image 'kiln\/no-such-image:1' is not in the Docker engine/,
      );
    });

    it("the container-image property chooses the image: Bazel's docker://NAME (a platform default) and a bare NAME (a target's exec_properties)", {
      timeout: 120_000,
    }, async () => {
      const cluster = await startKilnCluster(['--executors', '1', '--runner', 'docker'], process.cwd(), env);
      const ws = workspace(marker);
      const byDefault = await ws.kiln([
        'build',
        `--remote_executor=${cluster.endpoint}`,
        `--remote_default_exec_properties=container-image=docker://${marker}`,
        '//pkg:marker',
      ]);
      expect(byDefault.code, byDefault.stderr).toBe(0);
      expect(ws.read('kiln-bin/pkg/marker.txt')).toBe(`${marker}\n`);
      const byTarget = await ws.kiln(['build', `--remote_executor=${cluster.endpoint}`, '//pkg:marker_by_property']);
      expect(byTarget.code, byTarget.stderr).toBe(0);
      expect(ws.read('kiln-bin/pkg/marker_by_property.txt')).toBe(`${marker}\n`);
      const missing = await ws.kiln([
        'build',
        `--remote_executor=${cluster.endpoint}`,
        '--remote_default_exec_properties=container-image=docker://kiln/no-such-image:1',
        '//pkg:tools',
      ]);
      expect(missing.code).not.toBe(0);
      expect(missing.stderr).toContain("container image 'kiln/no-such-image:1' is not in the Docker engine");
    });
  });
}
