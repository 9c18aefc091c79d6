import { describe, expect, it } from 'vitest';
import { Loupe, SESSION_EVENTS, type SpanPayload } from '../../packages/sdk/src/index.js';
import { fakeFetch } from './sdk-fake-service.js';

async function runSession() {
  const service = fakeFetch();
  const loupe = new Loupe({ apiKey: 'lpk_test', baseUrl: 'http://loupe.test', fetch: service.fetch, env: {}, onError: () => {} });
  const session = loupe.session({ sessionId: 'sess-42', name: 'coding-session' });
  session.start({ cwd: '/repo' });

  session.turn('Fix the failing test');
  session.toolCall('Read', { file_path: 'src/a.ts' }).ok('file contents');
  session.toolCall('Bash', { command: 'npm test' }).fail(new Error('exit code 1'));
  const explorer = session.subAgent('explorer', { input: 'find the caller' });
  session.toolCall('Grep', { pattern: 'foo' }).ok(['src/b.ts']); // routed to the open sub-agent
  session.compaction({ trigger: 'auto', tokensBefore: 180_000 });
  explorer.end('found it in src/b.ts');
  session.stop({ output: 'Fixed.' });

  session.turn('Now add a test');
  session.toolCall('Write', { file_path: 'test/a.test.ts' }).ok();
  const open = session.toolCall('Bash', { command: 'sleep 100' }); // never finished
  session.end();
  open.ok('too late'); // after the end: ignored

  await loupe.shutdown();
  const traces = service.calls.flatMap((c) => c.body!.traces);
  const spans = traces.flatMap((t) => t.spans);
  return { traces, spans, byName: (name: string) => spans.filter((s) => s.name === name) };
}

describe('SDK coding-assistant session convention', () => {
  it('gives a root agent span, a chain per turn, tools under the turn, sub-agents as child agent spans', async () => {
    const { traces, spans, byName } = await runSession();
    expect(new Set(traces.map((t) => t.traceId)).size).toBe(1);
    expect(traces[0]).toMatchObject({ name: 'coding-session', sessionId: 'sess-42', source: 'sdk' });
    expect(spans).toHaveLength(9);

    const [root] = byName('coding-session') as [SpanPayload];
    expect(root).toMatchObject({ kind: 'agent', status: 'ok', input: { raw: { cwd: '/repo' } } });
    expect(root.parentSpanId).toBeUndefined();

    const [turn1] = byName('turn 1') as [SpanPayload];
    const [turn2] = byName('turn 2') as [SpanPayload];
    for (const turn of [turn1, turn2]) expect(turn).toMatchObject({ kind: 'chain', status: 'ok', parentSpanId: root.spanId });
    expect(turn1.input).toEqual({ messages: [{ role: 'user', content: 'Fix the failing test' }] });
    expect(turn1.output).toEqual({ messages: [{ role: 'assistant', content: 'Fixed.' }] });

    expect(byName('Read')[0]).toMatchObject({ kind: 'tool', status: 'ok', parentSpanId: turn1.spanId, output: { text: 'file contents' } });
    expect(byName('Read')[0]!.input!.toolCalls![0]).toMatchObject({ name: 'Read', arguments: { file_path: 'src/a.ts' } });
    expect(byName('Bash')[0]).toMatchObject({ kind: 'tool', status: 'error', statusMessage: 'exit code 1', parentSpanId: turn1.spanId });

    const [explorer] = byName('explorer') as [SpanPayload];
    expect(explorer).toMatchObject({ kind: 'agent', status: 'ok', parentSpanId: turn1.spanId, output: { text: 'found it in src/b.ts' } });
    expect(byName('Grep')[0]).toMatchObject({ kind: 'tool', status: 'ok', parentSpanId: explorer.spanId });

    expect(byName('Write')[0]).toMatchObject({ status: 'ok', parentSpanId: turn2.spanId });
    const unfinished = byName('Bash')[1]!;
    expect(unfinished).toMatchObject({ status: 'unset', parentSpanId: turn2.spanId });
    expect(unfinished.output).toBeUndefined();
  });

  it('compaction and stop are events on the active span, not spans', async () => {
    const { spans, byName } = await runSession();
    expect(spans.some((s) => s.name.includes('compaction') || s.name.includes('stop'))).toBe(false);
    expect(byName('explorer')[0]!.events).toEqual([
      { name: SESSION_EVENTS.compaction, timestamp: expect.any(String), attributes: { trigger: 'auto', tokensBefore: 180_000 } },
    ]);
    expect(byName('turn 1')[0]!.events).toEqual([
      { name: SESSION_EVENTS.stop, timestamp: expect.any(String), attributes: { graceful: true } },
    ]);
  });
});
