import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LocalProcessRunner, prepareSandboxEtc, type ProcessRunner, type ProcessSpec } from '../../../src/core/sandbox/index.js';

/**
 * What every namespace sandbox guarantees (bwrap's and the native one), beyond the cases all
 * runners share. `makeRunner` gets the /etc directory to show, when a case wants one.
 */
export function sandboxRunnerCases(makeRunner: (options: { readonly etcDirectory?: string }) => ProcessRunner): void {
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

  it('with a prepared /etc shows exactly the files it copied, in one mount', async () => {
    const etc = prepareSandboxEtc(join(root, 'etc'));
    const r = await makeRunner({ etcDirectory: etc }).run(spec('whoami >/dev/null && ls /etc | sort | tr "\\n" " "; test ! -e /etc/hostname'));
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
    const r = await makeRunner({}).run({
      argv: ['bash', '-c', 'cat in/source.txt > out/sub/copy.txt && cmp out/linked.txt in/source.txt && echo stray > stray.txt && pwd && ls -d out/sub'],
      cwd: '/in-sandbox/root',
      env: { PATH: '/usr/bin:/bin' },
      readOnlyPaths: [root],
      tree: {
        mounts: [{ host: outHost, at: '/in-sandbox/root/out' }],
        dirs: ['/in-sandbox/root/out/sub'],
        symlinks: [
          { path: '/in-sandbox/root/in/source.txt', target: source },
          // Made under the mount, so on the host: removed again when the process ends.
          { path: '/in-sandbox/root/out/linked.txt', target: source },
        ],
      },
      stdout: { kind: 'buffer', limitBytes: 1 << 16 },
      stderr: { kind: 'buffer', limitBytes: 1 << 16 },
    });
    expect(r.stderr.toString()).toBe('');
    expect(r.stdout.toString()).toBe('/in-sandbox/root\nout/sub\n');
    expect(readFileSync(join(outHost, 'sub', 'copy.txt'), 'utf8')).toBe('from the host\n');
    expect(readdirSync(outHost)).toEqual(['sub']);
    expect(existsSync('/in-sandbox')).toBe(false);
  });

  it('hides files outside the declared inputs, and declared inputs are read-only', async () => {
    const secret = join(root, 'undeclared.txt');
    const declaredDir = join(root, 'declared');
    mkdirSync(declaredDir, { recursive: true });
    writeFileSync(secret, 'secret\n');
    writeFileSync(join(declaredDir, 'input.txt'), 'input\n');
    const script = `cat ${declaredDir}/input.txt; cat ${secret}`;
    const l = await new LocalProcessRunner().run(spec(script, { readOnlyPaths: [declaredDir] }));
    expect(l).toMatchObject({ exitCode: 0 });
    expect(l.stdout.toString()).toBe('input\nsecret\n');
    const s = await makeRunner({}).run(spec(script, { readOnlyPaths: [declaredDir] }));
    expect(s.stdout.toString()).toBe('input\n');
    expect(s.exitCode).toBe(1);
    expect(s.stderr.toString()).toContain('No such file or directory');
    const w = await makeRunner({}).run(spec(`echo x > ${declaredDir}/input.txt`, { readOnlyPaths: [declaredDir] }));
    expect(w.exitCode).not.toBe(0);
    expect(w.stderr.toString()).toContain('Read-only file system');
    expect(readFileSync(join(declaredDir, 'input.txt'), 'utf8')).toBe('input\n');
  });

  it('has no network: a loopback server that answers outside is unreachable inside', async () => {
    const script = `exec 3<>/dev/tcp/127.0.0.1/${port} && head -n 1 <&3`;
    const l = await new LocalProcessRunner().run(spec(script));
    expect(l.exitCode).toBe(0);
    expect(l.stdout.toString()).toBe('hello\n');
    const s = await makeRunner({}).run(spec(script));
    expect(s.exitCode).not.toBe(0);
    expect(s.stdout.toString()).toBe('');
    const interfaces = await makeRunner({}).run(spec('ls /sys/class/net 2>/dev/null || ls /proc/sys/net/ipv4/conf'));
    expect(interfaces.stdout.toString()).not.toMatch(/eth|ens|enp|docker|veth/);
  });

  it('keeps writes inside the sandbox directory and loses every other write', async () => {
    const outside = join(root, 'outside');
    mkdirSync(outside);
    const r = await makeRunner({}).run(
      spec(`echo kept > out.txt; mkdir -p ${outside} && echo lost > ${outside}/x.txt; echo lost > /tmp/y.txt; echo lost > /z.txt; true`),
    );
    expect(r.exitCode).toBe(0);
    expect(existsSync(join(sandboxDir, 'out.txt'))).toBe(true);
    expect(existsSync(join(outside, 'x.txt'))).toBe(false);
    expect(existsSync('/z.txt')).toBe(false);
  });

  it('runs in its own pid namespace with its own hostname, seeing only its own processes', async () => {
    const r = await makeRunner({}).run(spec('echo $$; ls /proc | grep -c "^[0-9]*$"; cat /proc/sys/kernel/hostname'));
    const [pid, processes, hostname] = r.stdout.toString().split('\n');
    expect(Number(pid)).toBeLessThan(5);
    expect(Number(processes)).toBeLessThan(5);
    expect(hostname).toBe('localhost');
  });

  it('gives the process no capabilities and no way to gain any, even when Kiln runs as root', async () => {
    const r = await makeRunner({}).run(spec('grep -E "^(CapEff|CapPrm|CapBnd|NoNewPrivs)" /proc/self/status; mount -t tmpfs none /tmp 2>&1 && echo mounted'));
    const status = r.stdout.toString();
    expect(status).toMatch(/CapEff:\s+0+\n/);
    expect(status).toMatch(/CapPrm:\s+0+\n/);
    expect(status).not.toContain('mounted');
  });

  it('shows /usr read-only and a working minimal /dev', async () => {
    const r = await makeRunner({}).run(
      spec(
        'touch /usr/kiln-probe 2>/dev/null && echo wrote; head -c 4 /dev/zero | wc -c; echo gone > /dev/null && echo null-ok; ls /dev/fd/ >/dev/null && echo fd-ok; echo shm > /dev/shm/kiln && cat /dev/shm/kiln',
      ),
    );
    expect(r.stdout.toString()).toBe('4\nnull-ok\nfd-ok\nshm\n');
    expect(existsSync('/usr/kiln-probe')).toBe(false);
  });
}
