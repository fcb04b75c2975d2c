import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { E2eWorkspace } from './e2e-workspace.js';
import { needTool } from '../setup/need-tool.js';

const BINARY = fileURLToPath(new URL('../../bin/kiln', import.meta.url));
const BUILT = existsSync(fileURLToPath(new URL('../../dist/bundle/kiln.js', import.meta.url)));

// The sandbox itself is tested by exec; this checks the CLI wires --spawn_strategy=sandboxed
// through. bubblewrap comes from scripts/test-setup.d.
const HAS_BWRAP = spawnSync('bwrap', ['--version']).status === 0;

describe('kiln build --spawn_strategy=sandboxed', () => {
  const sandboxHere = needTool('bubblewrap', HAS_BWRAP, 'run scripts/test-setup.d/10-bubblewrap.sh (npm test does)');
  const builtHere = needTool('the built bin/kiln', BUILT, 'npm run build');
  it.skipIf(!sandboxHere)('hides an undeclared input that the local strategy sees', async () => {
    const ws = new E2eWorkspace({
      WORKSPACE: '',
      'pkg/secret.txt': 'undeclared\n',
      'pkg/BUILD': 'genrule(name = "peek", outs = ["peek.txt"], cmd = "cat pkg/secret.txt > $@ || echo hidden > $@")\n',
    });
    const sandboxed = await ws.kiln(['build', '--spawn_strategy=sandboxed', '//pkg:peek']);
    expect(sandboxed.code, sandboxed.stderr).toBe(0);
    expect(sandboxed.stderr).toContain('1 linux-sandbox');
    expect(ws.read('kiln-bin/pkg/peek.txt')).toBe('hidden\n');
    // The strategy is not part of the action key: clean, then run locally.
    expect((await ws.kiln(['clean'])).code).toBe(0);
    const local = await ws.kiln(['build', '--spawn_strategy=local', '//pkg:peek']);
    expect(local.code, local.stderr).toBe(0);
    expect(ws.read('kiln-bin/pkg/peek.txt')).toBe('undeclared\n');
  });

  // As a user runs it: a separate process whose spawn servers (one in an isolated network
  // namespace for the sandboxes) must keep it alive exactly as long as it needs them.
  it.skipIf(!sandboxHere || !builtHere)('the built bin/kiln builds in the sandbox, without network, and exits', async () => {
    // A listening socket on the host's loopback: the kernel completes the handshake even while
    // spawnSync blocks this process, so only a missing network makes the action's connect fail.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const ws = new E2eWorkspace({
      WORKSPACE: '',
      'pkg/BUILD': [
        'genrule(name = "a", outs = ["a.txt"], cmd = "echo a > $@")',
        `genrule(name = "net", outs = ["net.txt"], cmd = "(exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null && echo online > $@ || echo offline > $@")`,
        'genrule(name = "b", srcs = [":a", ":net"], outs = ["b.txt"], cmd = "cat $(SRCS) > $@")',
        '',
      ].join('\n'),
    });
    try {
      const env = { HOME: ws.home, PATH: process.env.PATH };
      const run = spawnSync(BINARY, ['build', '--spawn_strategy=sandboxed', '//pkg:b'], { cwd: ws.root, env, encoding: 'utf8', timeout: 60_000 });
      expect(run.status, run.stderr).toBe(0);
      expect(run.stderr).toContain('3 processes: 3 linux-sandbox.');
      expect(ws.read('kiln-bin/pkg/b.txt')).toBe('a\noffline\n');
      // The same command outside the sandbox reaches the server: the check above means something.
      spawnSync(BINARY, ['clean'], { cwd: ws.root, env });
      const local = spawnSync(BINARY, ['build', '--spawn_strategy=local', '//pkg:net'], { cwd: ws.root, env, encoding: 'utf8', timeout: 60_000 });
      expect(local.status, local.stderr).toBe(0);
      expect(ws.read('kiln-bin/pkg/net.txt')).toBe('online\n');
    } finally {
      server.close();
    }
  });

  // A terminal's Ctrl-C reaches the whole foreground process group; the spawn servers must survive it
  // so that Kiln reports the action as interrupted, and nothing may outlive Kiln.
  it.skipIf(!sandboxHere || !builtHere)('the built bin/kiln stops cleanly on Ctrl-C to its process group', async () => {
    const marker = `kiln-ctrl-c-${process.pid}-${Date.now()}`;
    const ws = new E2eWorkspace({
      WORKSPACE: '',
      'pkg/BUILD': `genrule(name = "slow", outs = ["slow.txt"], cmd = "echo started >&2; exec -a ${marker} sleep 60")\n`,
    });
    const child = spawn(BINARY, ['build', '--spawn_strategy=sandboxed', '//pkg:slow'], {
      cwd: ws.root,
      env: { HOME: ws.home, PATH: process.env.PATH },
      detached: true,
    });
    let stderr = '';
    const started = new Promise<void>((resolve) =>
      child.stderr.on('data', (c: Buffer) => {
        stderr += c.toString();
        if (stderr.includes('Executing genrule //pkg:slow')) resolve();
      }),
    );
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    await started;
    // The action's process itself must be running when the signal comes: wait until it shows.
    for (let i = 0; i < 200 && spawnSync('pgrep', ['-f', marker]).status !== 0; i++) await new Promise((r) => setTimeout(r, 25));
    expect(spawnSync('pgrep', ['-f', marker]).status).toBe(0);
    process.kill(-child.pid!, 'SIGINT');
    expect(await exited).toBe(8);
    expect(stderr).toContain('Executing genrule //pkg:slow interrupted');
    expect(spawnSync('pgrep', ['-f', marker]).stdout.toString()).toBe('');
  });
});
