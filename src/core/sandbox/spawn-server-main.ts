/**
 * The spawn server's process (see spawn-server.ts): runs each process group its parent asks for and
 * answers with the result. Messages from the parent: `{ run: id, spec }` and `{ kill: id }`; to it:
 * `{ ready: true }` once, then `{ done: id, result }` or `{ done: id, error }`. When the parent goes away, every group still
 * running is killed and the server exits.
 */
import { spawnProcessGroup, type ProcessGroupSpec } from './spawn-process-group.js';

type Request = { readonly run: number; readonly spec: ProcessGroupSpec } | { readonly kill: number };

const running = new Map<number, AbortController>();

// Kiln starts this process in a session of its own, so the terminal's Ctrl-C reaches Kiln only:
// Kiln decides what to stop and says so with `kill`. SIGTERM is ignored for the same reason (a
// process manager stopping Kiln's group); the server ends when its IPC channel closes.
process.on('SIGTERM', () => {});

process.on('message', (message: Request) => {
  if ('kill' in message) {
    running.get(message.kill)?.abort();
    return;
  }
  const id = message.run;
  const abort = new AbortController();
  running.set(id, abort);
  spawnProcessGroup({ ...message.spec, signal: abort.signal }).then(
    (result) => reply({ done: id, result }),
    (e: unknown) => reply({ done: id, error: e instanceof Error ? e.message : String(e) }),
  );
  function reply(answer: object): void {
    running.delete(id);
    tell(answer);
  }
});

/** Sends to the parent; once the parent has gone there is no one to tell, and that is no error. */
function tell(message: object): void {
  if (process.connected) process.send?.(message, undefined, undefined, () => {});
}

tell({ ready: true });

process.on('disconnect', () => {
  for (const abort of running.values()) abort.abort();
  // Give the kills a turn of the event loop to be sent before leaving.
  setImmediate(() => process.exit(0));
});
