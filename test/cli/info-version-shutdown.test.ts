import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { E2eWorkspace } from '../e2e/e2e-workspace.js';

const FILES = { WORKSPACE: '', 'pkg/BUILD': 'filegroup(name = "fg")\n' };

describe('kiln info', () => {
  it("prints Bazel's keys and Kiln's, sorted by name, as `key: value`", async () => {
    const ws = new E2eWorkspace(FILES);
    const run = await ws.kiln(['info']);
    expect(run.code).toBe(0);
    const keys = run.stdout
      .trim()
      .split('\n')
      .map((l) => l.slice(0, l.indexOf(':')));
    expect(keys).toEqual([
      'bazel-bin',
      'bazel-genfiles',
      'bazel-testlogs',
      'character-encoding',
      'command_log',
      'committed-heap-size',
      'execution_root',
      'install_base',
      'kiln-bin',
      'kiln-genfiles',
      'kiln-testlogs',
      'max-heap-size',
      'output_base',
      'output_path',
      'package_path',
      'release',
      'server_pid',
      'used-heap-size',
      'workspace',
    ]);
    const value = (key: string) => new RegExp(`^${key}: (.*)$`, 'm').exec(run.stdout)![1]!;
    expect(value('bazel-bin')).toBe(value('kiln-bin'));
    expect(value('bazel-bin')).toBe(join(value('execution_root'), 'bazel-out/k8-fastbuild/bin'));
    expect(value('bazel-testlogs')).toBe(join(value('execution_root'), 'bazel-out/k8-fastbuild/testlogs'));
    expect(value('output_path')).toBe(join(value('execution_root'), 'bazel-out'));
    expect(value('command_log')).toBe(join(value('output_base'), 'command.log'));
    expect(value('workspace')).toBe(ws.root);
    expect(value('package_path')).toBe('%workspace%');
    expect(value('release')).toBe('release e2e');
    expect(value('server_pid')).toBe(String(process.pid));
    expect(value('used-heap-size')).toMatch(/^\d+MB$/);
    expect(value('max-heap-size')).toMatch(/^\d+MB$/);
    expect(existsSync(join(value('install_base'), 'package.json'))).toBe(true);
  });

  it('one key prints its value alone; build options change the per-configuration paths', async () => {
    const ws = new E2eWorkspace(FILES);
    const bin = await ws.kiln(['info', 'bazel-bin', '-c', 'opt']);
    expect(bin.code).toBe(0);
    expect(bin.stdout).toMatch(/\/bazel-out\/k8-opt\/bin\n$/);
    const two = await ws.kiln(['info', 'bazel-genfiles', 'package_path']);
    expect(two.stdout).toMatch(/^bazel-genfiles: .*\/bazel-out\/k8-fastbuild\/bin\npackage_path: %workspace%\n$/);
  });

  it('a key Kiln has no value for (java-home: no JVM) is an unknown key, as Bazel reports one: exit 2', async () => {
    // Bazel 4.2.3: `bazel info nonsense` prints `ERROR: unknown key(s): 'nonsense'` and exits 2; its
    // java-home is its JVM's. Kiln has no JVM, so java-home is unknown here, with a line saying why.
    const ws = new E2eWorkspace(FILES);
    const java = await ws.kiln(['info', 'java-home']);
    expect(java.code).toBe(2);
    expect(java.stdout).toBe('');
    expect(java.stderr).toContain("ERROR: unknown key(s): 'java-home'\n");
    expect(java.stderr).toContain('Kiln runs no Java virtual machine');
    expect(await ws.kiln(['info', 'nonsense'])).toMatchObject({ code: 2, stderr: "ERROR: unknown key(s): 'nonsense'\n" });
  });
});

describe('kiln version', () => {
  it("prints Bazel's format; --gnu_format the GNU one", async () => {
    const ws = new E2eWorkspace(FILES);
    // Bazel 2.1.0's form: Build label, Build target, Build time with the seconds, the two timestamps.
    // Kiln's builds are unstamped: the epoch, as Bazel prints for an unstamped binary.
    expect(await ws.kiln(['version'])).toMatchObject({
      code: 0,
      stdout: 'Build label: e2e\nBuild target: bin/kiln.js\nBuild time: Thu Jan 1 00:00:00 1970 (0)\nBuild timestamp: 0\nBuild timestamp as int: 0\n',
    });
    expect(await ws.kiln(['version', '--gnu_format'])).toMatchObject({ code: 0, stdout: 'kiln e2e\n' });
    expect(await ws.kiln(['--version'])).toMatchObject({ code: 0, stdout: 'kiln e2e\n' });
    expect(await ws.kiln(['version', '--nope'])).toMatchObject({ code: 2, stderr: 'ERROR: Unrecognized option: --nope\n' });
  });
});

describe('kiln shutdown', () => {
  it('has nothing to stop: exit 0, with or without --iff_heap_size_greater_than', async () => {
    const ws = new E2eWorkspace(FILES);
    expect(await ws.kiln(['shutdown'])).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(await ws.kiln(['shutdown', '--iff_heap_size_greater_than=10'])).toMatchObject({ code: 0 });
    expect(await ws.kiln(['shutdown', '--iff_heap_size_greater_than', '10'])).toMatchObject({ code: 0 });
    expect((await ws.kiln(['shutdown', '--iff_heap_size_greater_than=big'])).code).toBe(2);
  });
});

describe('kiln help for these commands', () => {
  it('lists what cquery and aquery take, and points nowhere that fails', async () => {
    const ws = new E2eWorkspace(FILES);
    for (const command of ['cquery', 'aquery', 'info', 'shutdown', 'version']) {
      const help = await ws.kiln(['help', command]);
      expect(help.code).toBe(0);
      expect(help.stdout).toContain(`Usage: kiln ${command}`);
      expect(help.stdout).not.toContain(`kiln ${command} --help`);
    }
    const cquery = (await ws.kiln(['help', 'cquery'])).stdout;
    for (const option of ['--output', '--transitions', '--starlark:expr', '--universe_scope', '--[no]implicit_deps', '--compilation_mode'])
      expect(cquery).toContain(`  ${option} `);
    const aquery = (await ws.kiln(['help', 'aquery'])).stdout;
    expect(aquery).toContain('mnemonic(regex, expr)');
    expect(aquery).toContain('  --[no]include_commandline ');
    // Every option help names is accepted by the command (not an exit 2; --starlark:file wants a file that exists).
    for (const [command, text] of [
      ['cquery', cquery],
      ['aquery', aquery],
    ] as const) {
      const own = text.slice(text.indexOf(`Options of ${command}:`), text.indexOf('Build options:'));
      for (const m of own.matchAll(/^ {2}--(\[no\])?([\w:]+) /gm)) {
        const run = await ws.kiln([
          command,
          '//pkg:fg',
          `--${m[2]}${m[1] ? '' : m[2] === 'transitions' ? '=lite' : m[2] === 'output' ? (command === 'cquery' ? '=label' : '=text') : m[2] === 'query_file' ? '=' : m[2] === 'universe_scope' ? '=//pkg:fg' : '=str(target.label)'}`,
        ]);
        expect(run.stderr, `${command} --${m[2]}`).not.toContain('Unrecognized option');
        if (m[2] !== 'starlark:file') expect(run.code, `${command} --${m[2]}: ${run.stderr}`).not.toBe(2);
      }
    }
  });
});
