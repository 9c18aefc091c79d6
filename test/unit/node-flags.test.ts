import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { serviceNodeFlags } from '../../src/node-flags.js';

const root = new URL('../../', import.meta.url);

describe('the V8 flags of the service (src/node-flags.ts)', () => {
  it('are passed by npm start, before the entry point', () => {
    const start = (JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { scripts: { start: string } }).scripts.start;
    const words = start.split(/\s+/);
    const entry = words.indexOf('src/main.ts');
    for (const flag of serviceNodeFlags) {
      expect(words.indexOf(flag), `${flag} in "${start}"`).toBeGreaterThan(words.indexOf('node'));
      expect(words.indexOf(flag)).toBeLessThan(entry);
    }
  });

  it("are passed by the image's command, before the entry point", () => {
    const cmd = /^CMD (\[.*\])$/m.exec(readFileSync(new URL('Dockerfile', root), 'utf8'));
    expect(cmd).not.toBeNull();
    const words = JSON.parse(cmd![1]!) as string[];
    expect(words[0]).toBe('node');
    for (const flag of serviceNodeFlags) {
      expect(words.indexOf(flag), `${flag} in ${cmd![1]}`).toBeGreaterThan(0);
      expect(words.indexOf(flag)).toBeLessThan(words.indexOf('src/main.ts'));
    }
  });

  it('are flags this Node.js takes (it refuses a start with one it does not know)', () => {
    expect(() => execFileSync(process.execPath, ['--max-semi-space-size-unknown=1', '-e', '0'], { stdio: 'pipe' })).toThrow();
    expect(execFileSync(process.execPath, [...serviceNodeFlags, '-p', '"started"'], { encoding: 'utf8' }).trim()).toBe('started');
  });
});
