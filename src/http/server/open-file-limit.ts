import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * The process's soft limit on open files (RLIMIT_NOFILE) as it stands now; Node raises the soft
 * limit to the hard one at start, so this is what the process can really open. Read from
 * `/proc/self/limits` on Linux, else from the shell's `ulimit -Sn` (a child inherits the limit);
 * undefined when unlimited or unknown.
 */
export function openFileLimit(): number | undefined {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = line?.slice('Max open files'.length).trim().split(/\s+/)[0];
    if (soft !== undefined) return limitOf(soft);
  } catch {
    // not Linux: ask the shell
  }
  try {
    return limitOf(execFileSync('sh', ['-c', 'ulimit -Sn'], { encoding: 'utf8', timeout: 5000 }).trim());
  } catch {
    return undefined;
  }
}

function limitOf(text: string): number | undefined {
  return /^\d+$/.test(text) ? Number(text) : undefined;
}
