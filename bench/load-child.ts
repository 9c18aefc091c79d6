import { fork } from 'node:child_process';

/** What a load child reports: answers per second, and how many answers were not the expected 200. */
export interface LoadFigures {
  rps: number;
  other: number;
}

/**
 * Runs `script` again as a child in its load role (`--role load ...args`), so the load is
 * generated on another thread than the service's, and resolves with the figures it sends back.
 */
export function forkLoad(script: string, args: string[]): Promise<LoadFigures> {
  return new Promise((resolve, reject) => {
    const child = fork(script, ['--role', 'load', ...args], { execArgv: ['--import', 'tsx'] });
    child.once('message', (message) => resolve(message as LoadFigures));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? undefined : reject(new Error(`load child exited ${code}`))));
  });
}

/** The middle value (the upper one of an even count). */
export const medianOf = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
