import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, inject, it } from 'vitest';

/**
 * The Python SDK (packages/python) is checked by its own tools: ruff, mypy --strict and its
 * pytest suite, which starts the service from this checkout and talks to it over HTTP. This file
 * runs them as part of the suite (`npm run test:python` runs them alone).
 */
const pythonPackage = fileURLToPath(new URL('../../packages/python/', import.meta.url));

/**
 * Runs a command to its end without blocking this process's event loop (a synchronous spawn of
 * minutes starves the test runner's own messages, which then time out).
 */
function run(command: string, args: string[], env: Record<string, string> = {}): Promise<{ status: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: pythonPackage, env: { ...process.env, ...env } });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.on('error', (error) => resolve({ status: null, output: `${output}${String(error)}` }));
    child.on('close', (status) => resolve({ status, output }));
  });
}

describe('the Python SDK', () => {
  it('installs with pip, and ruff, ruff format and mypy --strict are clean', { timeout: 900_000 }, async () => {
    const setup = await run('bash', ['scripts/setup-venv.sh']);
    expect(setup.status, setup.output).toBe(0);
    for (const [command, args] of [
      ['.venv/bin/ruff', ['check', '.']],
      ['.venv/bin/ruff', ['format', '--check', '.']],
      ['.venv/bin/mypy', []],
    ] as const) {
      const checked = await run(command, [...args]);
      expect(checked.status, `${command} ${args.join(' ')}\n${checked.output}`).toBe(0);
    }
  });

  it('passes its pytest suite against a service it starts', { timeout: 900_000 }, async () => {
    // The suite's PostgreSQL server: the Python tests make their own database on it.
    const tested = await run('.venv/bin/python', ['-m', 'pytest', '-q', '-p', 'no:cacheprovider'], {
      LOUPE_TEST_DATABASE_URL: inject('postgresUrl'),
    });
    expect(tested.status, tested.output).toBe(0);
    expect(tested.output).toMatch(/\d+ passed/);
    expect(tested.output).not.toMatch(/\d+ (failed|skipped|error)/);
  });
});
