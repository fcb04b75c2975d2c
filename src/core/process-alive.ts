/**
 * Whether a process with this pid exists (ours or another user's): signal 0 checks without
 * sending anything. A recycled pid reads as alive, so callers only ever keep things on doubt.
 */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
