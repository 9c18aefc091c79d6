import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../src/stores/postgres.js';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

export interface ServiceProcess {
  child: ChildProcess;
  baseUrl: string;
  output: () => string;
  /** SIGTERM to the whole process group; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Runs the service the README's way (`npm start`) and waits until /healthz answers 200. With
 * `openFileLimit`, under that limit on open files (soft and hard, as `ulimit -n` sets both).
 */
export async function startService(
  env: Record<string, string>,
  timeoutMs = 60_000,
  options: { openFileLimit?: number } = {},
): Promise<ServiceProcess> {
  const port = await freePort();
  let output = '';
  const [command, args] =
    options.openFileLimit === undefined
      ? ['npm', ['start', '--silent']]
      : ['sh', ['-c', `ulimit -n ${options.openFileLimit} && exec npm start --silent`]];
  const child = spawn(command, args, {
    cwd: repoRoot,
    // OTLP/gRPC off unless a test asks for it: other test processes run at the same time, and its default port is fixed.
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', LOUPE_OTLP_GRPC_PORT: '0', ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the service exited early:\n${output}`);
    try {
      const res = await fetch(`${baseUrl}/healthz`);
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      process.kill(-child.pid!, 'SIGKILL');
      throw new Error(`/healthz did not answer within ${timeoutMs} ms:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    child,
    baseUrl,
    output: () => output,
    stop: async () => {
      child.kill('SIGTERM'); // as a supervisor would: the main process only; npm forwards it
      const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 30_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}
