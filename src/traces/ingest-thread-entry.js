// The ingest thread's entry (ingest-thread.ts): it loads the TypeScript sources as the service
// does (bin/loupe.js, `--import tsx`), then the module named in its data.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.module);
