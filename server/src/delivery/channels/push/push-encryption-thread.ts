// A worker thread of the encryption pool: encrypts each batch it is sent and posts the bodies back.
import { parentPort } from 'node:worker_threads';
import { encryptJob, type EncryptionJob } from './push-encryption-pool.js';

parentPort!.on('message', ({ id, jobs }: { id: number; jobs: EncryptionJob[] }) => {
  const results = jobs.map(encryptJob).map((r) =>
    // A small Buffer is a view into a shared 8 KB slab that posting would copy whole: give each body its own.
    'body' in r ? { body: new Uint8Array(r.body) } : r,
  );
  parentPort!.postMessage(
    { id, results },
    results.flatMap((r) => ('body' in r ? [r.body.buffer as ArrayBuffer] : [])),
  );
});
