/**
 * `npm run bench -- python [--calls N] [--rounds R]`: the Python SDK's decorator overhead per span
 * against a bare function in the same run (packages/python/bench/decorator_overhead.py), in the
 * package's venv (made or updated first).
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const pythonPackage = fileURLToPath(new URL('../packages/python/', import.meta.url));

export async function run(args: string[]): Promise<void> {
  execFileSync('bash', ['scripts/setup-venv.sh'], { cwd: pythonPackage, stdio: 'inherit' });
  execFileSync('.venv/bin/python', ['bench/decorator_overhead.py', ...args], { cwd: pythonPackage, stdio: 'inherit' });
  return Promise.resolve();
}
