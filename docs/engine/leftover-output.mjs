// The embedded engine's leftover output: a statement that fails after it began to write its
// answer leaves that output in the session, in front of the next statement's answer.
// Run with the engine's package alone: `npm install chdb@3.4.0 && node leftover-output.mjs`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

const { Session } = createRequire(import.meta.url)('chdb');
const dir = mkdtempSync(path.join(tmpdir(), 'chdb-leftover-'));
const session = new Session(dir);

async function run(sql, format = 'JSONEachRow') {
  try {
    const result = await session.queryAsync(sql, { format });
    const text = result.bytes().toString();
    return `answered ${text.length} bytes: ${JSON.stringify(text.slice(0, 60))}`;
  } catch (error) {
    return `failed: ${String(error.message).slice(0, 60)}`;
  }
}

// 1. A runtime error part-way through the answer.
console.log('A', await run("SELECT throwIf(number = 200000, 'boom') AS x FROM numbers(300000)"));
// 2. The next statement on the same session: expected {"v":"B-own"} alone.
console.log('B', await run("SELECT 'B-own' AS v"));
// 3. Once more: the leftover was consumed by B.
console.log('B again', await run("SELECT 'B-own' AS v"));
// 4. A result limit hit part-way, in a format that writes a head first (JSONCompact's "meta").
console.log(
  'A',
  await run(
    "SELECT number, x FROM numbers(10) ARRAY JOIN range(10000) AS x SETTINGS max_result_rows = 20000, result_overflow_mode = 'throw'",
    'JSONCompact',
  ),
);
console.log('B', await run("SELECT 'B-own' AS v"));

session.close();
rmSync(dir, { recursive: true, force: true });
