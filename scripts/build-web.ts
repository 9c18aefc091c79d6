/**
 * Builds the web console into web/dist; the root package's `prepare` runs it, so `npm install`
 * (and `npm ci`) leave a servable console. The console is its own package (web/package.json and
 * its lock file): its toolchain (Vite, TypeScript 5 for the OpenAPI type generator) never
 * meets the service's. Steps: install web/ from its lock file, generate the client types from
 * the API's own OpenAPI document, type-check, bundle.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const web = fileURLToPath(new URL('../web/', import.meta.url));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function run(args: string[]) {
  execFileSync(npm, args, { cwd: web, stdio: 'inherit' });
}

function installed(): boolean {
  const hidden = `${web}node_modules/.package-lock.json`;
  return existsSync(hidden) && statSync(hidden).mtimeMs >= statSync(`${web}package-lock.json`).mtimeMs;
}

if (process.env.LOUPE_SKIP_WEB_BUILD === '1') {
  console.log('LOUPE_SKIP_WEB_BUILD=1: the web console is not built');
  process.exit(0);
}
if (!installed()) {
  const lock = readFileSync(`${web}package-lock.json`, 'utf8');
  try {
    run(['ci', '--no-audit', '--no-fund', '--loglevel=error']);
  } catch {
    // As in CI: a registry missing another platform's optional packages makes `npm ci` refuse a
    // lock that `npm install` accepts unchanged; a changed lock is still an error.
    console.log('npm ci refused web/package-lock.json; installing the locked versions with npm install');
    run(['install', '--no-audit', '--no-fund', '--loglevel=error']);
    if (readFileSync(`${web}package-lock.json`, 'utf8') !== lock) {
      console.error('web/package-lock.json had to change: commit the updated lock file');
      process.exit(1);
    }
  }
}
run(['run', 'build', '--silent']);
