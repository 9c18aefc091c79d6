import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../support/process.js';

// The scripts live inside the repository so that `@loupe/sdk` resolves as it does for an
// application: through node_modules to the package's built files, never to its TypeScript.
mkdirSync(path.join(repoRoot, '.tmp'), { recursive: true });
const dir = mkdtempSync(path.join(repoRoot, '.tmp', 'sdk-package-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Sends one span to a fake fetch and renders a prompt; prints what it saw as JSON. */
const body = (load: string) => `${load}
const sent = [];
const fetch = async (url, init) => {
  sent.push({ url, body: JSON.parse(init.body) });
  return new Response(JSON.stringify({ data: { accepted: 1, rejected: 0, errors: [] }, meta: {} }), {
    status: 200,
    headers: { 'content-type': 'application/json' },
  });
};
const loupe = new sdk.Loupe({ apiKey: 'lpk_test', baseUrl: 'http://127.0.0.1:9', fetch, env: {}, source: 'plain-node' });
loupe.startSpan('answer', { kind: 'llm.chat' }).end();
loupe.shutdown().then(() => {
  console.log(JSON.stringify({
    exports: Object.keys(sdk).sort(),
    kinds: sdk.SPAN_KINDS.length,
    rendered: sdk.render({ systemPrompt: 'Hi {name}, {n} {{x}}', humanPrompt: null }, { name: 'Ann', n: 2 }).systemPrompt,
    kept: sdk.renderTemplate('{a} {b}', { a: true }),
    sent: sent.map((s) => ({ url: s.url, source: s.body.traces[0].source, kind: s.body.traces[0].spans[0].kind })),
  }));
});
`;

function run(file: string, source: string) {
  writeFileSync(path.join(dir, file), source);
  // Plain node: no tsx, no loader, no TypeScript.
  return JSON.parse(
    execFileSync(process.execPath, [path.join(dir, file)], { cwd: dir, encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } }),
  );
}

describe('@loupe/sdk as an installed package', () => {
  it('is built to JavaScript with type declarations for both module systems', () => {
    const dist = path.join(repoRoot, 'packages', 'sdk', 'dist');
    for (const file of ['esm/index.js', 'esm/index.d.ts', 'cjs/index.js', 'cjs/index.d.ts', 'esm/contract/template.js']) {
      expect(existsSync(path.join(dist, file)), file).toBe(true);
    }
  });

  it('works from a plain node script with import and with require, with the same exports', () => {
    const esm = run('consumer.mjs', body("import * as sdk from '@loupe/sdk';"));
    const cjs = run('consumer.cjs', body("const sdk = require('@loupe/sdk');"));
    expect(esm).toEqual(cjs);
    expect(esm.exports).toEqual(
      expect.arrayContaining(['Loupe', 'LoupeError', 'SPAN_KINDS', 'render', 'renderTemplate', 'templateVariables']),
    );
    expect(esm.kinds).toBe(15);
    expect(esm.rendered).toBe('Hi Ann, 2 {x}');
    expect(esm.kept).toEqual({ text: 'true {b}', placeholders: ['a', 'b'], missing: ['b'] });
    expect(esm.sent).toEqual([{ url: 'http://127.0.0.1:9/api/traces', source: 'plain-node', kind: 'llm.chat' }]);
  });
});
