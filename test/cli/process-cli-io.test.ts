import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { INTERRUPT_GRACE_MS, SERVER_INTERRUPT_GRACE_MS, processCliIO, type InterruptibleProcess } from '../../src/cli/index.js';

class ProcessExit extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

/** A process whose signals the test sends and whose exit throws instead of ending the test run. */
function fakeProcess() {
  const emitter = new EventEmitter();
  let stderr = '';
  const exits: number[] = [];
  const proc: InterruptibleProcess = {
    stdout: { write: () => true },
    stderr: { write: (c) => (stderr += String(c)) },
    env: {},
    cwd: () => '/',
    on: (signal, listener) => emitter.on(signal, listener),
    removeListener: (signal, listener) => emitter.removeListener(signal, listener),
    exit: (code) => {
      exits.push(code);
      throw new ProcessExit(code);
    },
  };
  return { proc, emitter, exits, stderr: () => stderr };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('processCliIO', () => {
  it('listens to signals only once a command asks for interrupted', () => {
    const { proc, emitter } = fakeProcess();
    const io = processCliIO(proc);
    expect(emitter.listenerCount('SIGINT')).toBe(0);
    void io.interrupted;
    expect(emitter.listenerCount('SIGINT')).toBe(1);
    expect(emitter.listenerCount('SIGTERM')).toBe(1);
    void io.interrupted;
    expect(emitter.listenerCount('SIGTERM')).toBe(1);
    io.dispose();
    expect(emitter.listenerCount('SIGINT') + emitter.listenerCount('SIGTERM')).toBe(0);
  });

  it('resolves interrupted on SIGTERM and exits 8 when the command has not stopped after the grace period', async () => {
    vi.useFakeTimers();
    const { proc, emitter, exits, stderr } = fakeProcess();
    const io = processCliIO(proc);
    let interrupted = false;
    void io.interrupted!.then(() => (interrupted = true));
    emitter.emit('SIGTERM', 'SIGTERM');
    await Promise.resolve();
    expect(interrupted).toBe(true);
    expect(exits).toEqual([]);
    expect(() => vi.advanceTimersByTime(INTERRUPT_GRACE_MS)).toThrow(ProcessExit);
    expect(exits).toEqual([8]);
    expect(stderr()).toBe('ERROR: Kiln did not stop within 1.5s of SIGTERM: exiting.\n');
  });

  it('exits at once on a second interrupt', () => {
    vi.useFakeTimers();
    const { proc, emitter, exits } = fakeProcess();
    void processCliIO(proc).interrupted;
    emitter.emit('SIGINT', 'SIGINT');
    expect(() => emitter.emit('SIGINT', 'SIGINT')).toThrow(ProcessExit);
    expect(exits).toEqual([8]);
  });

  it('gives a server the longer grace it asked for to remove what it started', () => {
    vi.useFakeTimers();
    const { proc, emitter, exits, stderr } = fakeProcess();
    const io = processCliIO(proc);
    io.setInterruptGrace(SERVER_INTERRUPT_GRACE_MS);
    void io.interrupted;
    emitter.emit('SIGTERM', 'SIGTERM');
    vi.advanceTimersByTime(SERVER_INTERRUPT_GRACE_MS - 1);
    expect(exits).toEqual([]);
    expect(() => vi.advanceTimersByTime(1)).toThrow(ProcessExit);
    expect(stderr()).toBe(`ERROR: Kiln did not stop within ${SERVER_INTERRUPT_GRACE_MS / 1000}s of SIGTERM: exiting.\n`);
  });

  it('does not listen to SIGTERM while a phase that never yields runs, so that its default action ends Kiln', () => {
    const { proc, emitter } = fakeProcess();
    const io = processCliIO(proc);
    void io.interrupted;
    const during = io.runInterruptibly(() => [emitter.listenerCount('SIGTERM'), emitter.listenerCount('SIGINT')]);
    expect(during).toEqual([0, 1]);
    expect(emitter.listenerCount('SIGTERM')).toBe(1);
    expect(() =>
      io.runInterruptibly(() => {
        throw new Error('work failed');
      }),
    ).toThrow('work failed');
    expect(emitter.listenerCount('SIGTERM')).toBe(1);
  });

  it('tells the SIGTERM relay what SIGTERM does: default, a listener, or breaking a phase (nested too)', () => {
    const { proc } = fakeProcess();
    const modes: string[] = [];
    const io = processCliIO(proc, { setMode: (m) => void modes.push(m), ready: Promise.resolve() });
    io.runInterruptibly(() => io.runInterruptibly(() => modes.push('inner')));
    void io.interrupted;
    io.runInterruptibly(() => {});
    io.dispose();
    expect(modes).toEqual(['break', 'break', 'inner', 'break', 'default', 'listener', 'break', 'listener', 'default']);
  });
});
