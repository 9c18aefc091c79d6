import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, inject, it } from 'vitest';

/**
 * The Python SDK (packages/python) is checked by its own tools: ruff, mypy --strict and its
 * pytest suite, which starts the service from this checkout and talks to it over HTTP. This file
 * runs them as part of the suite (`npm run test:python` runs them alone).
 */
const pythonPackage = fileURLToPath(new URL('../../packages/python/', import.meta.url));

function run(command: string, args: string[], env: Record<string, string> = {}) {
  const done = spawnSync(command, args, {
    cwd: pythonPackage,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  return { status: done.status, output: `${done.stdout ?? ''}${done.stderr ?? ''}${done.error ? String(done.error) : ''}` };
}

describe('the Python SDK', () => {
  it('installs with pip, and ruff, ruff format and mypy --strict are clean', { timeout: 900_000 }, () => {
    const setup = run('bash', ['scripts/setup-venv.sh']);
    expect(setup.status, setup.output).toBe(0);
    for (const [command, args] of [
      ['.venv/bin/ruff', ['check', '.']],
      ['.venv/bin/ruff', ['format', '--check', '.']],
      ['.venv/bin/mypy', []],
    ] as const) {
      const checked = run(command, [...args]);
      expect(checked.status, `${command} ${args.join(' ')}\n${checked.output}`).toBe(0);
    }
  });

  it('passes its pytest suite against a service it starts', { timeout: 900_000 }, () => {
    // The suite's PostgreSQL server: the Python tests make their own database on it.
    const tested = run('.venv/bin/python', ['-m', 'pytest', '-q', '-p', 'no:cacheprovider'], {
      LOUPE_TEST_DATABASE_URL: inject('postgresUrl'),
    });
    expect(tested.status, tested.output).toBe(0);
    expect(tested.output).toMatch(/\d+ passed/);
    expect(tested.output).not.toMatch(/\d+ (failed|skipped|error)/);
  });
});
