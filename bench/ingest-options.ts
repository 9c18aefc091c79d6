import path from 'node:path';

/** The ingest benchmark's options (ingest.ts). */
export interface Options {
  preload: number;
  spans: number;
  seconds: number;
  sustain: number;
  /** Also time the reads from the load generator's own process, in a second 16-client shape. */
  compareReaders: boolean;
  /** Under load, a list and a trace read start every this many ms (at once after a slower pair); 0: back to back. */
  readEvery: number;
  /** Also time the engine's small inserts (1 trace of 10 spans, 16 writers, 20 s), plain and asynchronous. */
  smallInserts: boolean;
  /** Where to write a CPU profile of the service's thread over the first 15 s of the 16-client shape. */
  cpuProfile?: string;
  /** The native shapes' traces start at one past date instead of when they are sent. */
  fixedStartTimes: boolean;
}

export function parseOptions(args: string[]): Options {
  const value = (name: string, fallback: number) => {
    const i = args.indexOf(`--${name}`);
    const n = i >= 0 ? Number(args[i + 1]) : fallback;
    if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a whole number`);
    return n;
  };
  return {
    preload: value('preload', 1_000_000),
    spans: value('spans', 300_000),
    seconds: value('seconds', 60),
    sustain: value('sustain', 0),
    compareReaders: args.includes('--compare-readers'),
    smallInserts: args.includes('--small-inserts'),
    readEvery: value('read-every', 500),
    fixedStartTimes: args.includes('--fixed-start-times'),
    ...(args.includes('--cpu-profile') && { cpuProfile: path.resolve(args[args.indexOf('--cpu-profile') + 1] ?? 'service.cpuprofile') }),
  };
}
