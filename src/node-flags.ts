/**
 * The V8 flags the service runs with. `npm start` (package.json) and the image's command
 * (Dockerfile) pass them, and so do the benchmarks' service processes (a unit test checks the
 * first two against this list).
 *
 * A young generation of 32 MiB per semi-space, twice V8's default on 64-bit: under many small
 * ingest requests each request's parsed body, rows and their encoding die young, while the rows
 * waiting for a flush survive a scavenge or two; with the larger semi-space the service's thread
 * scavenged about half as often under 16 small-payload clients and spent a fifth to a quarter
 * less time in them, peak RSS within the runs' spread (docs/benchmarks.md, 2026-11-26, fifth
 * pass).
 */
export const serviceNodeFlags = ['--max-semi-space-size=32'] as const;
