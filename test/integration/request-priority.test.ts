import { readFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { raiseRequestPriority } from '../../src/server.js';
import { createTestContext, type TestContext } from '../support/app.js';

/** The nice value of the calling thread, as the kernel holds it. */
function threadNice(): number {
  const stat = readFileSync('/proc/thread-self/stat', 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}
/** Whether this process may raise a priority (root has CAP_SYS_NICE). */
const mayRaise = process.getuid?.() === 0;

let ctx: TestContext | undefined;
afterAll(async () => {
  setPriority(0);
  await ctx?.close();
});

describe('requests before background work (LOUPE_REQUEST_NICE)', () => {
  it('raises the request thread where the OS allows it, and says so where it does not', () => {
    const lines: string[] = [];
    const log = pino({ level: 'info' }, new Writable({ write: (chunk, _e, done) => (lines.push(String(chunk)), done()) }));
    const before = threadNice();
    raiseRequestPriority(loadConfig({ LOUPE_REQUEST_NICE: '-5' }), log);
    if (mayRaise) {
      expect(threadNice()).toBe(-5);
      expect(lines).toEqual([]);
    } else {
      expect(threadNice()).toBe(before);
      expect(lines.join('')).toMatch(/CAP_SYS_NICE/);
    }
    setPriority(0);
    raiseRequestPriority(loadConfig({ LOUPE_REQUEST_NICE: '0' }), log);
    expect(threadNice()).toBe(0);
  });

  it("runs the embedded engine's reads at that priority, its writer's flushes at 19", async () => {
    ctx = await createTestContext();
    const setting = async (client: TestContext['clickhouse']) => {
      const result = await client.query({ query: "SELECT getSetting('os_thread_priority') AS nice", format: 'JSONEachRow' });
      return Number((await result.json<{ nice: number }>())[0]!.nice);
    };
    if (ctx.config.CLICKHOUSE_URL) return expect(await setting(ctx.clickhouse)).toBe(0);
    expect(await setting(ctx.clickhouse)).toBe(ctx.config.LOUPE_REQUEST_NICE);
    expect(await setting(ctx.writeClient)).toBe(19);
  });
});
