// Builds the client twice with tsc: dist/esm (ES modules) and dist/cjs (CommonJS), each with
// its type declarations. Run by `npm install` (the root package's prepare script), by
// `npm test` and before `npm pack`.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
let tsc;
try {
  tsc = join(dirname(createRequire(join(root, 'package.json')).resolve('typescript/package.json')), 'bin', 'tsc');
} catch {
  // A production install (npm ci --omit=dev, as in the service image) has no TypeScript and
  // needs no built client: the service runs from source.
  console.log('@loupe/sdk: TypeScript is not installed; the build is skipped');
  process.exit(0);
}
rmSync(join(root, 'dist'), { recursive: true, force: true });
for (const project of ['tsconfig.json', 'tsconfig.cjs.json']) {
  execFileSync(process.execPath, [tsc, '-p', join(root, project)], { stdio: 'inherit' });
}
// The package is "type": "module"; this marks the CommonJS half as CommonJS.
mkdirSync(join(root, 'dist', 'cjs'), { recursive: true });
writeFileSync(join(root, 'dist', 'cjs', 'package.json'), '{ "type": "commonjs" }\n');
