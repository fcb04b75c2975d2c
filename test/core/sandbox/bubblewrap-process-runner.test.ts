import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BubblewrapProcessRunner, LocalProcessRunner, detectSandboxSupport, prepareSandboxEtc, type ProcessRunner, type ProcessSpec } from '../../../src/core/index.js';
import { processRunnerCases } from './process-runner-cases.js';

const support = await detectSandboxSupport();
if (!support.available && process.env.CI === 'true') {
  throw new Error(`the namespace sandbox must be available under CI: ${support.reason}`);
}
if (!support.available) {
  console.warn(`skipping BubblewrapProcessRunner tests: ${support.reason} (run scripts/test-setup.d/10-bubblewrap.sh)`);
}

describe.skipIf(!support.available)('BubblewrapProcessRunner', () => {
  const bwrapPath = support.available ? support.bwrapPath : '';
  processRunnerCases(() => new BubblewrapProcessRunner({ bwrapPath }));

  let root: string;
  let sandboxDir: string;
  let server: Server;
  let port: number;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'kiln-sandbox-'));
    sandboxDir = join(root, 'sandbox');
    mkdirSync(sandboxDir);
    server = createServer((socket) => socket.end('hello\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    rmSync(root, { recursive: true, force: true });
    await new Promise((resolve) => server.close(resolve));
  });

  const spec = (script: string, extra: Partial<ProcessSpec> = {}): ProcessSpec => ({
    argv: ['bash', '-c', script],
    cwd: sandboxDir,
    env: { PATH: '/usr/bin:/bin' },
    stdout: { kind: 'buffer', limitBytes: 1 << 16 },
    stderr: { kind: 'buffer', limitBytes: 1 << 16 },
    ...extra,
  });
  const both = (): [string, ProcessRunner][] => [
    ['local', new LocalProcessRunner()],
    ['sandbox', new BubblewrapProcessRunner({ bwrapPath })],
  ];

  it('with a prepared /etc shows exactly the files it copied, in one mount', async () => {
    const etc = prepareSandboxEtc(join(root, 'etc'));
    const runner = new BubblewrapProcessRunner({ bwrapPath, etcDirectory: etc });
    const r = await runner.run(spec('whoami >/dev/null && ls /etc | sort | tr "\\n" " "; test ! -e /etc/hostname'));
    expect(r.stderr.toString()).toBe('');
    expect(r.exitCode).toBe(0);
    const shown = r.stdout.toString().trim().split(' ');
    expect(shown).toContain('passwd');
    expect(shown.every((name) => ['passwd', 'group', 'nsswitch.conf', 'ld.so.cache', 'ld.so.conf', 'localtime', 'alternatives'].includes(name))).toBe(true);
  });

  it('makes a tree inside the sandbox: symlinks and dirs vanish with it, writes under a mount land on the host', async () => {
    const source = join(root, 'source.txt');
    writeFileSync(source, 'from the host\n');
    const outHost = join(root, 'tree-out');
    mkdirSync(outHost);
    const runner = new BubblewrapProcessRunner({ bwrapPath });
    const r = await runner.run({
      argv: ['bash', '-c', 'cat in/source.txt > out/sub/copy.txt && echo stray > stray.txt && pwd && ls -d out/sub'],
      cwd: '/in-sandbox/root',
      env: { PATH: '/usr/bin:/bin' },
      readOnlyPaths: [root],
      tree: {
        mounts: [{ host: outHost, at: '/in-sandbox/root/out' }],
        dirs: ['/in-sandbox/root/out/sub'],
        symlinks: [{ path: '/in-sandbox/root/in/source.txt', target: source }],
      },
      stdout: { kind: 'buffer', limitBytes: 1 << 16 },
      stderr: { kind: 'buffer', limitBytes: 1 << 16 },
    });
    expect(r.stderr.toString()).toBe('');
    expect(r.stdout.toString()).toBe('/in-sandbox/root\nout/sub\n');
    expect(readFileSync(join(outHost, 'sub', 'copy.txt'), 'utf8')).toBe('from the host\n');
    expect(existsSync('/in-sandbox')).toBe(false);
    await expect(new LocalProcessRunner().run({ argv: ['true'], cwd: '/', env: {}, tree: { mounts: [], dirs: [], symlinks: [] } })).rejects.toThrow(
      'a process on the host cannot have a sandbox tree',
    );
  });

  it('hides files outside the declared inputs', async () => {
    const secret = join(root, 'undeclared.txt');
    const declaredDir = join(root, 'declared');
    mkdirSync(declaredDir, { recursive: true });
    writeFileSync(secret, 'secret\n');
    writeFileSync(join(declaredDir, 'input.txt'), 'input\n');
    const script = `cat ${declaredDir}/input.txt; cat ${secret}`;
    const [local, sandboxed] = both();
    const l = await local[1].run(spec(script, { readOnlyPaths: [declaredDir] }));
    expect(l).toMatchObject({ exitCode: 0 });
    expect(l.stdout.toString()).toBe('input\nsecret\n');
    const s = await sandboxed[1].run(spec(script, { readOnlyPaths: [declaredDir] }));
    expect(s.stdout.toString()).toBe('input\n');
    expect(s.exitCode).toBe(1);
    expect(s.stderr.toString()).toContain('No such file or directory');
    // Declared inputs are read-only inside.
    const w = await sandboxed[1].run(spec(`echo x > ${declaredDir}/input.txt`, { readOnlyPaths: [declaredDir] }));
    expect(w.exitCode).not.toBe(0);
  });

  it('has no network: a loopback server that answers outside is unreachable inside', async () => {
    const script = `exec 3<>/dev/tcp/127.0.0.1/${port} && head -n 1 <&3`;
    const [local, sandboxed] = both();
    const l = await local[1].run(spec(script));
    expect(l.exitCode).toBe(0);
    expect(l.stdout.toString()).toBe('hello\n');
    const s = await sandboxed[1].run(spec(script));
    expect(s.exitCode).not.toBe(0);
    expect(s.stdout.toString()).toBe('');
  });

  it('keeps writes inside the sandbox directory and loses every other write', async () => {
    const outside = join(root, 'outside');
    mkdirSync(outside);
    const r = await new BubblewrapProcessRunner({ bwrapPath }).run(
      spec(`echo kept > out.txt; mkdir -p ${outside} && echo lost > ${outside}/x.txt; echo lost > /tmp/y.txt; echo lost > /z.txt; true`),
    );
    expect(r.exitCode).toBe(0);
    expect(existsSync(join(sandboxDir, 'out.txt'))).toBe(true);
    expect(existsSync(join(outside, 'x.txt'))).toBe(false);
    expect(existsSync('/z.txt')).toBe(false);
  });

  it('runs as pid 1 of its own pid namespace with its own hostname', async () => {
    const r = await new BubblewrapProcessRunner({ bwrapPath }).run(spec('echo $$; ps -e --no-headers 2>/dev/null | wc -l; cat /proc/sys/kernel/hostname'));
    const [pid, , hostname] = r.stdout.toString().split('\n');
    expect(Number(pid)).toBeLessThan(5);
    expect(hostname).toBe('localhost');
  });
});

describe('detectSandboxSupport', () => {
  it('explains why when bwrap is missing', async () => {
    const r = await detectSandboxSupport({ env: { PATH: '/nonexistent' } });
    expect(r).toEqual({ available: false, reason: expect.stringContaining('bubblewrap (bwrap) is not installed') });
  });

  it('explains why when bwrap cannot run', async () => {
    const r = await detectSandboxSupport({ bwrapPath: '/bin/false' });
    expect(r.available).toBe(false);
    if (!r.available) expect(r.reason).toContain('/bin/false cannot create namespaces');
  });
});
