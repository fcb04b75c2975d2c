import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FileWriterThread } from '../../src/remote/file-writer-thread.js';

// The thread runs the build's compiled entry (npm run build makes it; the test script builds first).
const SCRIPT = resolve('dist/src/remote/file-writer-main.js');

describe('FileWriterThread', () => {
  let dir: string;
  let writer: FileWriterThread;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'kiln-file-writer-'));
    writer = new FileWriterThread(SCRIPT);
  });
  afterEach(async () => {
    await writer.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('has a compiled entry to run', () => {
    expect(existsSync(SCRIPT)).toBe(true);
  });

  it('writes many files in batches on its thread, with their modes, into directories the caller made', async () => {
    expect(await writer.whenReady()).toBe('online');
    // Parents are the caller's (OutputDirectories makes them without following links): none is made here.
    for (let p = 0; p < 37; p++) mkdirSync(join(dir, `p${p}`));
    await expect(writer.write(join(dir, 'missing', 'f'), Buffer.from('x'), 0o644)).rejects.toMatchObject({ code: 'ENOENT' });
    const files = Array.from({ length: 600 }, (_, i) => ({
      path: join(dir, `p${i % 37}`, `f${i}`),
      data: Buffer.from(`file ${i}\n`.repeat(i % 5)),
      mode: i % 3 === 0 ? 0o755 : 0o644,
    }));
    await Promise.all(files.map((f) => writer.write(f.path, f.data, f.mode)));
    for (const f of files) {
      expect(readFileSync(f.path)).toEqual(f.data);
      expect(statSync(f.path).mode & 0o777).toBe(f.mode);
    }
    // No temporary file is left beside the outputs.
    expect(readdirSync(join(dir, 'p0')).filter((n) => n.includes('kiln-download'))).toEqual([]);
  });

  it('replaces a file or a directory at the path', async () => {
    expect(await writer.whenReady()).toBe('online');
    writeFileSync(join(dir, 'old-file'), 'old');
    mkdirSync(join(dir, 'old-dir', 'sub'), { recursive: true });
    writeFileSync(join(dir, 'old-dir', 'sub', 'x'), 'x');
    // Queued in one turn, so they go to the thread as one batch.
    await Promise.all([writer.write(join(dir, 'old-file'), Buffer.from('new file'), 0o644), writer.write(join(dir, 'old-dir'), Buffer.from('new dir'), 0o644)]);
    expect(readFileSync(join(dir, 'old-file'), 'utf8')).toBe('new file');
    expect(readFileSync(join(dir, 'old-dir'), 'utf8')).toBe('new dir');
  });

  it("fails only the write that cannot be done, with the system's code", async () => {
    expect(await writer.whenReady()).toBe('online');
    writeFileSync(join(dir, 'a-file'), '');
    const bad = writer.write(join(dir, 'a-file', 'below'), Buffer.from('x'), 0o644);
    const good = writer.write(join(dir, 'fine'), Buffer.from('y'), 0o644);
    await expect(bad).rejects.toMatchObject({ code: 'ENOTDIR' });
    await good;
    expect(readFileSync(join(dir, 'fine'), 'utf8')).toBe('y');
  });

  it("writes a turn's lone file on the calling thread when nothing is in flight, and a batch on the thread", async () => {
    expect(await writer.whenReady()).toBe('online');
    const posted = vi.spyOn(Worker.prototype, 'postMessage');
    try {
      await writer.write(join(dir, 'alone'), Buffer.from('alone'), 0o640);
      expect(posted).not.toHaveBeenCalled();
      expect(statSync(join(dir, 'alone')).mode & 0o777).toBe(0o640);
      await Promise.all([writer.write(join(dir, 'one'), Buffer.from('1'), 0o644), writer.write(join(dir, 'two'), Buffer.from('2'), 0o644)]);
      expect(posted).toHaveBeenCalledTimes(1);
      expect(readFileSync(join(dir, 'alone'), 'utf8') + readFileSync(join(dir, 'one'), 'utf8') + readFileSync(join(dir, 'two'), 'utf8')).toBe('alone12');
    } finally {
      posted.mockRestore();
    }
  });

  it('writes on the calling thread before the thread is online and after it is gone', async () => {
    await writer.write(join(dir, 'early'), Buffer.from('early'), 0o644);
    expect(readFileSync(join(dir, 'early'), 'utf8')).toBe('early');
    await writer.close();
    expect(await writer.whenReady()).toBe('unavailable');
    await writer.write(join(dir, 'late'), Buffer.from('late'), 0o600);
    expect(statSync(join(dir, 'late')).mode & 0o777).toBe(0o600);
  });

  it('without a compiled entry writes everything on the calling thread', async () => {
    const plain = new FileWriterThread(null);
    expect(await plain.whenReady()).toBe('unavailable');
    await plain.write(join(dir, 'here'), Buffer.from('here'), 0o644);
    expect(readFileSync(join(dir, 'here'), 'utf8')).toBe('here');
  });

  it('keeps the process alive while a write is pending, and not once it is idle', () => {
    const target = join(dir, 'from-child');
    const r = runWithOnlineWriter(
      dir,
      `
      // Two writes in one turn: a batch for the thread, which must keep the process alive until answered.
      Promise.all([writer.write(${JSON.stringify(target)}, Buffer.from('child'), 0o644), writer.write(${JSON.stringify(target + '-2')}, Buffer.from('2'), 0o644)]).then(() => console.log('written'));`,
    );
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('written');
    expect(r.status).toBe(0);
    expect(readFileSync(target, 'utf8')).toBe('child');
  });

  it('lets the process exit when the thread is online but was never sent a batch', () => {
    const target = join(dir, 'lone');
    const r = runWithOnlineWriter(
      dir,
      `
      // A lone write is done on this thread: the idle thread must not hold the process.
      writer.write(${JSON.stringify(target)}, Buffer.from('lone'), 0o644).then(() => console.log('written'));`,
    );
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('written');
    expect(r.status).toBe(0);
    expect(readFileSync(target, 'utf8')).toBe('lone');
  });
});

/**
 * Runs `body` in a child process once its FileWriterThread (`writer`) is online, as a module file as the
 * CLI runs (under `node -e` the process exits even while a worker's message port is referenced, which
 * would hide a hang).
 */
function runWithOnlineWriter(dir: string, body: string) {
  const file = join(dir, 'child.mjs');
  writeFileSync(
    file,
    `const { FileWriterThread } = await import(${JSON.stringify(resolve('dist/src/remote/file-writer-thread.js'))});
    const writer = new FileWriterThread(${JSON.stringify(SCRIPT)});
    if ((await writer.whenReady()) !== 'online') throw new Error('thread not online');
    ${body}`,
  );
  return spawnSync(process.execPath, [file], { encoding: 'utf8', timeout: 20_000 });
}
