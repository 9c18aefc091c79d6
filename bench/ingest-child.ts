import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { serviceNodeFlags } from '../src/node-flags.js';

/** The ingest benchmark itself, which each of its processes runs in its role (`--role`). */
const ingestScript = fileURLToPath(new URL('./ingest.ts', import.meta.url));

/** A process of the benchmark in `role`, its messages handed to `onMessage`. */
export function child(role: string, env: Record<string, string>, onMessage: (message: any, proc: ChildProcess) => void) {
  // The service's process runs with the service's V8 flags (src/node-flags.ts), as npm start does.
  const execArgv = [...(role === 'server' ? serviceNodeFlags : []), '--import', 'tsx'];
  const proc = fork(ingestScript, ['--role', role], { env: { ...process.env, ...env }, execArgv, stdio: 'inherit' });
  proc.on('message', (message) => onMessage(message, proc));
  return proc;
}
