/**
 * `npm run bench -- <name> [options]` runs bench/<name>.ts, which exports
 * `run(args: string[]): Promise<void>`. Names are plain words, so nothing outside bench/ loads.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const [name, ...args] = process.argv.slice(2);
if (!name || !/^[a-z][a-z0-9-]*$/.test(name) || !existsSync(fileURLToPath(new URL(`./${name}.ts`, import.meta.url)))) {
  console.error('usage: npm run bench -- <name> [options]   (name: a file of bench/, e.g. ingest)');
  process.exit(2);
}
const bench = (await import(`./${name}.ts`)) as { run(args: string[]): Promise<void> };
await bench.run(args);
// Benchmarks leave keep-alive sockets and child handles behind; the run is over.
process.exit(0);
