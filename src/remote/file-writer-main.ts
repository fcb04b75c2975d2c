// The file writer thread's entry (see file-writer-thread.ts): writes each batch it is sent and
// answers with the batch's id and the files that failed.
import { parentPort } from 'node:worker_threads';
import { writeFileAtomicallySync } from './atomic-file-write.js';
import type { WriteBatch, WriteBatchAnswer } from './file-writer-thread.js';

parentPort?.on('message', (batch: WriteBatch) => {
  const bytes = new Uint8Array(batch.bytes);
  const failures: WriteBatchAnswer['failures'][number][] = [];
  batch.files.forEach((file, index) => {
    try {
      writeFileAtomicallySync(file.path, bytes.subarray(file.offset, file.offset + file.length), file.mode);
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      failures.push({ index, message: err.message, ...(err.code !== undefined ? { code: err.code } : {}) });
    }
  });
  parentPort!.postMessage({ id: batch.id, failures } satisfies WriteBatchAnswer);
});
