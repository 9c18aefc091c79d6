import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerLimit } from '../../src/mcp/bounded-answer.js';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';

/**
 * Loupe's MCP tools through the MCP SDK's own client, against a listening service: every tool
 * on both transports (streamable HTTP at /mcp, and `loupe mcp` on stdio reading the service
 * over its REST API), their size bound and the hint that says how to read on, and the
 * workspace of the key as the only one any tool sees.
 */

const bin = fileURLToPath(new URL('../../bin/loupe.js', import.meta.url));
let ctx: TestContext;
let a: Tenant;
let b: Tenant;
let baseUrl: string;
let datasetId: string;
let wideDatasetId: string;
let wideRunId: string;
let otherDatasetId: string;
const runIds: Record<string, string> = {};

const ago = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();
const span = (overrides: Record<string, unknown>) => ({
  name: 'step',
  kind: 'tool',
  status: 'ok',
  startTime: ago(30),
  endTime: ago(29),
  durationMs: 60_000,
  ...overrides,
});
/** A text whose every part says where it is, so a page read at the wrong offset shows. */
const longOutput = Array.from({ length: 9_000 }, (_, i) => `w${String(i).padStart(5, '0')}`).join(' ');
const bulkName = (i: number) => `bulk ${i} ${'n'.repeat(900)}`;

async function ingest(tenant: Tenant, traces: unknown[]) {
  for (let i = 0; i < traces.length; i += 100) {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/api/traces/batch',
      headers: tenant.headers,
      payload: { traces: traces.slice(i, i + 100) },
    });
    expect(res.json<{ data: { rejected: number } }>().data.rejected, res.body.slice(0, 500)).toBe(0);
  }
}

async function api<T>(tenant: Tenant, method: 'GET' | 'POST' | 'PUT', url: string, payload?: object): Promise<T> {
  const res = await ctx.app.inject({ method, url, headers: tenant.headers, ...(payload ? { payload } : {}) });
  expect(res.statusCode, res.body).toBeLessThan(300);
  return res.json<{ data: T }>().data;
}

beforeAll(async () => {
  ctx = await createTestContext();
  a = await ctx.tenant();
  b = await ctx.tenant();
  await ingest(a, [
    {
      traceId: 'checkout-1',
      name: 'checkout',
      source: 'sdk',
      sessionId: 's-1',
      userId: 'u-1',
      environment: 'production',
      tags: ['checkout', 'web'],
      spans: [
        span({ spanId: 'root', name: 'agent run', kind: 'agent', startTime: ago(40), endTime: ago(39) }),
        span({
          spanId: 'llm',
          parentSpanId: 'root',
          name: 'chat',
          kind: 'llm.chat',
          model: 'gpt-4o',
          provider: 'openai',
          inputTokens: 100,
          outputTokens: 20,
          totalTokens: 120,
          startTime: ago(40),
          endTime: ago(39.5),
          input: { messages: [{ role: 'user', content: 'where is my parcel' }] },
          output: { text: 'It ships tomorrow' },
          attributes: { 'app.version': '7.1' },
        }),
      ],
    },
    {
      traceId: 'checkout-2',
      name: 'checkout',
      source: 'sdk',
      sessionId: 's-1',
      userId: 'u-2',
      environment: 'staging',
      tags: ['checkout'],
      spans: [span({ spanId: 'root', name: 'pay', status: 'error', statusMessage: 'card declined', startTime: ago(20), endTime: ago(19) })],
    },
    {
      traceId: 'big-tree',
      name: 'crawl',
      source: 'sdk',
      spans: [
        span({ spanId: 'root', name: 'crawl', kind: 'agent' }),
        ...Array.from({ length: 700 }, (_, i) =>
          span({
            spanId: `page-${String(i).padStart(3, '0')}`,
            parentSpanId: i % 10 === 0 ? 'root' : `page-${String(i - (i % 10)).padStart(3, '0')}`,
            name: `fetch https://example.com/${'p'.repeat(20)}/${i}`,
          }),
        ),
      ],
    },
    {
      traceId: 'big-output',
      name: 'summarize',
      source: 'sdk',
      spans: [span({ spanId: 'root', kind: 'llm.chat', output: { text: longOutput } })],
    },
    ...Array.from({ length: 100 }, (_, i) => ({
      traceId: `bulk-${i}`,
      name: bulkName(i),
      source: 'sdk',
      tags: ['bulk'],
      spans: [span({ spanId: 'root', startTime: ago(60 + i), endTime: ago(59 + i) })],
    })),
  ]);
  // Two runs of a dataset of four items: one trace per run item, scored `correct`.
  const correct = { r1: [true, false, false, true], r2: [true, true, true, true] };
  await ingest(
    a,
    (['r1', 'r2'] as const).flatMap((run) =>
      correct[run].map((_, i) => ({
        traceId: `exp-${run}-${i}`,
        name: `exp ${run}`,
        source: 'sdk',
        spans: [span({ spanId: 'root', name: `exp ${run}`, durationMs: 100 * (i + 1), costUsd: 0.01 })],
      })),
    ),
  );
  await api(a, 'POST', '/api/scores', {
    scores: [
      ...(['r1', 'r2'] as const).flatMap((run) =>
        correct[run].map((value, i) => ({ traceId: `exp-${run}-${i}`, name: 'correct', value, source: 'eval' })),
      ),
      { traceId: 'checkout-1', name: 'helpfulness', value: 0.9, comment: 'clear answer', source: 'annotation' },
      { traceId: 'checkout-2', name: 'helpfulness', value: 0.2, source: 'annotation' },
      { sessionId: 's-1', name: 'tone', value: 'friendly' },
    ],
  });
  const dataset = await api<{ id: string }>(a, 'POST', '/api/datasets', { name: 'support cases', description: 'questions customers ask' });
  datasetId = dataset.id;
  await api(a, 'POST', `/api/datasets/${datasetId}/items`, {
    items: correct.r1.map((_, i) => ({ id: `case-${i}`, input: { question: `q${i}` }, expectedOutput: `a${i}` })),
  });
  for (const run of ['r1', 'r2'] as const) {
    const created = await api<{ id: string }>(a, 'POST', `/api/datasets/${datasetId}/runs`, { name: run, metadata: { model: `m-${run}` } });
    runIds[run] = created.id;
    await api(a, 'POST', `/api/datasets/${datasetId}/runs/${created.id}/items`, {
      items: correct[run].map((_, i) => ({
        datasetItemId: `case-${i}`,
        traceId: `exp-${run}-${i}`,
        output: `${run} answer ${i}`,
        ...(run === 'r1' && i === 2 ? { error: 'task: timeout' } : {}),
      })),
    });
  }
  // A run of 100 items with long outputs: its page does not fit one answer.
  const wide = await api<{ id: string }>(a, 'POST', '/api/datasets', { name: 'wide' });
  wideDatasetId = wide.id;
  await api(a, 'POST', `/api/datasets/${wide.id}/items`, {
    items: Array.from({ length: 100 }, (_, i) => ({ id: `w-${String(i).padStart(3, '0')}`, input: i })),
  });
  const wideRun = await api<{ id: string }>(a, 'POST', `/api/datasets/${wide.id}/runs`, { name: 'wide run' });
  wideRunId = wideRun.id;
  await api(a, 'POST', `/api/datasets/${wide.id}/runs/${wideRun.id}/items`, {
    items: Array.from({ length: 100 }, (_, i) => ({
      datasetItemId: `w-${String(i).padStart(3, '0')}`,
      traceId: `no-trace-${i}`,
      output: 'o'.repeat(1_000),
    })),
  });
  otherDatasetId = (await api<{ id: string }>(b, 'POST', '/api/datasets', { name: 'b secret dataset' })).id;
  await api(b, 'POST', '/api/scores', { scores: [{ traceId: 'only-in-b', name: 'helpfulness', value: 0.5 }] });
  // The other workspace: a trace of its own and one with an id A also uses.
  await ingest(b, [
    { traceId: 'only-in-b', name: 'secret', source: 'sdk', sessionId: 's-b', spans: [span({ spanId: 'root', name: 'b root' })] },
    { traceId: 'checkout-1', name: 'b-checkout', source: 'sdk', sessionId: 's-1', spans: [span({ spanId: 'root', name: 'b root' })] },
  ]);
  const first = await api<{ id: number }>(a, 'POST', '/api/prompt', {
    name: 'greeting',
    systemPrompt: 'You greet {name} in {language}.',
    humanPrompt: 'Say hello to {name}',
  });
  const second = await api<{ id: number }>(a, 'POST', `/api/prompt/${first.id}/versions`, {
    newVersion: '1.1.0',
    changes: { systemPrompt: 'You greet {name} warmly.', isLatest: true },
  });
  await api(a, 'PUT', `/api/prompt/${first.id}/labels/production`);
  expect(second.id).toBeGreaterThan(first.id);
  await api(b, 'POST', '/api/prompt', { name: 'b-only-prompt', systemPrompt: 'secret' });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const address = ctx.app.server.address();
  baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});
afterAll(async () => {
  await ctx?.close();
});

const transports: Record<string, () => Transport> = {
  'streamable HTTP (/mcp)': () => new StreamableHTTPClientTransport(new URL('/mcp', baseUrl), { requestInit: { headers: a.headers } }),
  'stdio (loupe mcp)': () =>
    new StdioClientTransport({
      command: process.execPath,
      args: [bin, 'mcp'],
      env: { ...(process.env as Record<string, string>), LOUPE_URL: baseUrl, LOUPE_API_KEY: a.key, LOG_LEVEL: 'silent' },
      stderr: 'pipe',
    }),
};

describe.each(Object.keys(transports))('over %s', (transportName) => {
  let client: Client;
  beforeAll(async () => {
    client = new Client({ name: 'loupe-test', version: '1.0.0' });
    await client.connect(transports[transportName]!());
  });
  afterAll(async () => {
    await client?.close();
  });

  async function call(name: string, args: Record<string, unknown> = {}) {
    const result = await client.callTool({ name, arguments: args });
    const content = result.content as Array<{ type: string; text: string }>;
    expect(content).toHaveLength(1);
    const text = content[0]!.text;
    expect(text.length, `${name} answered ${text.length} characters`).toBeLessThanOrEqual(answerLimit);
    return { text, isError: result.isError === true };
  }
  /** The arguments of the call the hint names (`tool {...}`), as JSON. */
  function nextCall(text: string, tool: string): Record<string, unknown> {
    const match = new RegExp(`${tool} (\\{.*?\\})(?:[.,]? |\\.?$)`, 'm').exec(text);
    expect(match, `no ${tool} call in the hint:\n${text.slice(-600)}`).not.toBeNull();
    return JSON.parse(match![1]!) as Record<string, unknown>;
  }
  const traceIds = (text: string) =>
    text
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => (JSON.parse(line) as { traceId: string }).traceId);

  it('lists the tools, read-only, each described for an agent', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      'compare_runs',
      'get_analytics',
      'get_prompt',
      'get_run',
      'get_score_analytics',
      'get_session',
      'get_span',
      'get_stats',
      'get_trace',
      'list_datasets',
      'list_prompts',
      'list_runs',
      'list_scores',
      'render_prompt',
      'run_sql',
      'search_traces',
    ]);
    for (const tool of tools) {
      expect(tool.description!.length).toBeGreaterThan(80);
      expect(tool.annotations?.readOnlyHint).toBe(true);
      expect(tool.inputSchema.type).toBe('object');
    }
    expect(client.getInstructions()).toMatch(/search_traces/);
  });

  it('search_traces: filters by status, session, user, tag, model, environment, name and time', async () => {
    expect(traceIds((await call('search_traces', { status: 'error' })).text)).toEqual(['checkout-2']);
    expect(traceIds((await call('search_traces', { sessionId: 's-1' })).text)).toEqual(['checkout-2', 'checkout-1']);
    expect(traceIds((await call('search_traces', { userId: 'u-1' })).text)).toEqual(['checkout-1']);
    expect(traceIds((await call('search_traces', { tags: ['checkout', 'web'] })).text)).toEqual(['checkout-1']);
    expect(traceIds((await call('search_traces', { model: 'gpt-4o' })).text)).toEqual(['checkout-1']);
    expect(traceIds((await call('search_traces', { environment: 'staging' })).text)).toEqual(['checkout-2']);
    expect(traceIds((await call('search_traces', { name: 'checkout', startAfter: ago(30) })).text)).toEqual(['checkout-2']);
    const line = (await call('search_traces', { userId: 'u-1' })).text.split('\n')[1]!;
    expect(JSON.parse(line)).toMatchObject({ traceId: 'checkout-1', status: 'completed', model: 'gpt-4o', totalTokens: 120, spanCount: 2 });
    const none = await call('search_traces', { startAfter: new Date(Date.now() + 3_600_000).toISOString() });
    expect(none.text).toMatch(/^0 traces:\n\nNo trace matches/);
  });

  it("search_traces: never shows another workspace's traces", async () => {
    expect(traceIds((await call('search_traces', { name: 'secret' })).text)).toEqual([]);
    expect(traceIds((await call('search_traces', { name: 'b-checkout' })).text)).toEqual([]);
  });

  it('search_traces: pages on with the cursor the hint names', async () => {
    const first = await call('search_traces', { sessionId: 's-1', limit: 1 });
    expect(traceIds(first.text)).toEqual(['checkout-2']);
    const next = nextCall(first.text, 'search_traces');
    expect(next).toMatchObject({ sessionId: 's-1', limit: 1, cursor: expect.any(String) });
    const second = await call('search_traces', next);
    expect(traceIds(second.text)).toEqual(['checkout-1']);
    expect(second.text).toMatch(/No more traces match\.$/);
  });

  it('search_traces: a page over the bound is cut, with the limit that fits', async () => {
    const cut = await call('search_traces', { tags: ['bulk'], limit: 100 });
    const shown = traceIds(cut.text);
    expect(shown.length).toBeGreaterThan(5);
    expect(shown.length).toBeLessThan(100);
    expect(cut.text).toContain(`${100 - shown.length} more traces of this page not shown`);
    expect(cut.text).toContain(`call again with limit ${shown.length}`);
    // With that limit the page fits whole and names its cursor.
    const fits = await call('search_traces', { tags: ['bulk'], limit: shown.length });
    expect(traceIds(fits.text)).toEqual(shown);
    expect(nextCall(fits.text, 'search_traces').cursor).toEqual(expect.any(String));
  });

  it('search_traces: q finds text in the spans, searchIn narrows the texts, each hit names its span and snippet', async () => {
    const hit = await call('search_traces', { q: 'parcel' });
    expect(traceIds(hit.text)).toEqual(['checkout-1']);
    const line = JSON.parse(hit.text.split('\n')[1]!) as { highlight: { spanId: string; field: string; text: string } };
    expect(line.highlight).toMatchObject({ spanId: 'llm', field: 'input' });
    expect(line.highlight.text).toContain('where is my parcel');
    expect(traceIds((await call('search_traces', { q: 'parcel', searchIn: ['output', 'names'] })).text)).toEqual([]);
    expect(traceIds((await call('search_traces', { q: '"ships tomorrow"', searchIn: ['output'] })).text)).toEqual(['checkout-1']);
    expect(traceIds((await call('search_traces', { q: 'declined', status: 'error' })).text)).toEqual(['checkout-2']);
    // Another workspace's texts are never searched.
    expect(traceIds((await call('search_traces', { q: 'secret' })).text)).toEqual([]);
    const bad = await call('search_traces', { q: '!!!' });
    expect(bad.isError).toBe(true);
    expect(bad.text).toMatch(/^VALIDATION_ERROR: .*q.*must hold a letter or digit/s);
  });

  it('list_scores: filters, lines with the value as given, cursor pages, this workspace only', async () => {
    const helpfulness = await call('list_scores', { name: 'helpfulness' });
    const lines = helpfulness.text
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    // Given in one request, so at the same time: their order is the id's.
    expect(lines.map((l) => [l.traceId, l.value, l.source]).sort()).toEqual([
      ['checkout-1', 0.9, 'annotation'],
      ['checkout-2', 0.2, 'annotation'],
    ]);
    expect(lines.find((l) => l.traceId === 'checkout-1')).toMatchObject({ comment: 'clear answer', dataType: 'numeric' });
    const tone = await call('list_scores', { sessionId: 's-1', dataType: 'categorical' });
    expect(tone.text).toContain('"name":"tone","dataType":"categorical","value":"friendly"');
    const r1 = await call('list_scores', { name: 'correct', minValue: 1, source: 'eval' });
    expect(r1.text).toMatch(/^6 scores:/);
    expect(r1.text).toContain('"value":true');
    const first = await call('list_scores', { name: 'correct', limit: 5 });
    expect(first.text).toMatch(/^5 scores \(more on the next page\):/);
    const next = nextCall(first.text, 'list_scores');
    expect(next).toMatchObject({ name: 'correct', limit: 5, cursor: expect.any(String) });
    expect((await call('list_scores', next)).text).toMatch(/^3 scores:[\s\S]*No more scores match\.$/);
    expect((await call('list_scores', { traceId: 'only-in-b' })).text).toMatch(/^0 scores:\n\nNo score matches/);
  });

  it('get_score_analytics: per name its count, mean and distribution, then its points over time', async () => {
    const { text } = await call('get_score_analytics', {});
    const figures = text
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { name: string; count: number; mean: number; distribution?: Record<string, number> });
    const byName = Object.fromEntries(figures.map((f) => [f.name, f]));
    // helpfulness: this workspace's two (0.9, 0.2), not the other's 0.5.
    expect(byName.helpfulness).toMatchObject({ dataType: 'numeric', count: 2 });
    expect(byName.helpfulness!.mean).toBeCloseTo(0.55, 10);
    expect(byName.correct).toMatchObject({ dataType: 'boolean', count: 8, distribution: { true: 6, false: 2 } });
    expect(text).toContain('\nOver time (daily points per name):\n');
    expect(text).toMatch(/^helpfulness: \[\{"bucket":"[^"]+","count":2,"mean":0.55\}\]$/m);
    const one = await call('get_score_analytics', { name: 'tone', interval: 'hour' });
    expect(one.text).toMatch(/^1 score names from /);
    expect(one.text).toContain('hourly');
  });

  it("list_datasets and list_runs: the datasets by name, a dataset's runs newest first", async () => {
    const datasets = await call('list_datasets');
    expect(datasets.text).toMatch(/^2 datasets:\n\{"id":"[^"]+","name":"support cases","description":"questions customers ask"/);
    expect(datasets.text).not.toContain('b secret dataset');
    expect((await call('list_datasets', { name: 'WIDE' })).text).toMatch(/^1 datasets named like "WIDE":\n\{"id":"[^"]+","name":"wide"/);
    const more = await call('list_datasets', { offset: 1 });
    expect(more.text).toMatch(/^2 datasets, from 1:\n\{[^\n]*"name":"wide"/);
    const runs = await call('list_runs', { datasetId });
    const lines = runs.text.split('\n').filter((l) => l.startsWith('{'));
    expect(lines.map((l) => (JSON.parse(l) as { name: string }).name)).toEqual(['r2', 'r1']);
    expect(JSON.parse(lines[1]!)).toMatchObject({ id: runIds.r1, metadata: '{"model":"m-r1"}', itemCount: 4 });
    const other = await call('list_runs', { datasetId: otherDatasetId });
    expect(other.isError).toBe(true);
    expect(other.text).toMatch(/^NOT_FOUND: /);
  });

  it("get_run: the run's figures, then its items paged, each with its trace's scores", async () => {
    const { text } = await call('get_run', { datasetId, runId: runIds.r1, limit: 3 });
    expect(text).toMatch(new RegExp(`^Run \\{"id":"${runIds.r1}","name":"r1"`));
    const figures = JSON.parse(/^figures: (.*)$/m.exec(text)![1]!) as Record<string, number>;
    expect(figures).toMatchObject({ items: 4, errors: 1, latencyP50: expect.any(Number) });
    expect(figures.costUsd).toBeCloseTo(0.04, 10);
    const correctLine = JSON.parse(/^score (.*)$/m.exec(text)![1]!) as Record<string, unknown>;
    expect(correctLine).toMatchObject({ name: 'correct', dataType: 'boolean', n: 4, mean: 0.5 });
    const items = text
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(items.map((i) => i.datasetItemId)).toEqual(['case-0', 'case-1', 'case-2']);
    expect(items[2]).toMatchObject({
      traceId: 'exp-r1-2',
      failed: true,
      error: 'task: timeout',
      output: 'r1 answer 2',
      scores: { correct: 0 },
    });
    const rest = await call('get_run', nextCall(text, 'get_run'));
    expect(rest.text).toContain('"datasetItemId":"case-3"');
    expect(rest.text).toMatch(/No more items in this run\.$/);
  });

  it('get_run: a page over the bound is cut with the limit that fits, outputs cut at 300 characters', async () => {
    const cut = await call('get_run', { datasetId: wideDatasetId, runId: wideRunId, limit: 100 });
    const shown = cut.text.split('\n').filter((l) => l.startsWith('{'));
    expect(shown.length).toBeGreaterThan(10);
    expect(shown.length).toBeLessThan(100);
    expect((JSON.parse(shown[0]!) as { output: string }).output).toBe(`${'o'.repeat(299)}…`);
    expect(cut.text).toContain(`${100 - shown.length} more items of this page not shown`);
    expect(cut.text).toContain(`call again with limit ${shown.length}`);
    const fits = await call('get_run', { datasetId: wideDatasetId, runId: wideRunId, limit: shown.length });
    expect(nextCall(fits.text, 'get_run')).toMatchObject({ cursor: expect.any(String), limit: shown.length });
  });

  it('compare_runs: a verdict per metric, then the items side by side', async () => {
    const { text, isError } = await call('compare_runs', { datasetId, runs: [runIds.r1, runIds.r2], limit: 2 });
    expect(isError).toBe(false);
    const metric = text
      .split('\n')
      .filter((l) => l.startsWith('{"kind"'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((m) => m.name === 'correct');
    // r1 → r2: case-1 and case-2 turn true, none turns false: 2 discordant pairs, exact p = 0.5.
    expect(metric).toMatchObject({ kind: 'score', n: 4, baselineMean: 0.5, mean: 1, difference: 0.5, test: 'mcnemar_exact' });
    expect(metric!.pValue).toBeCloseTo(0.5, 10);
    expect(metric!.verdict).toBe('no significant difference');
    const sides = text
      .split('\n')
      .filter((l) => l.startsWith('{"datasetItemId"'))
      .map((l) => JSON.parse(l) as { datasetItemId: string; runs: Array<{ output: string; scores: Record<string, number> }> });
    expect(sides.map((s) => s.datasetItemId)).toEqual(['case-0', 'case-1']);
    expect(sides[1]!.runs.map((r) => [r.output, r.scores.correct])).toEqual([
      ['r1 answer 1', 0],
      ['r2 answer 1', 1],
    ]);
    expect(nextCall(text, 'compare_runs')).toMatchObject({ runs: [runIds.r1, runIds.r2], cursor: expect.any(String) });
    const one = await call('compare_runs', { datasetId, runs: [runIds.r1, wideRunId] });
    expect(one.isError).toBe(true);
    expect(one.text).toMatch(/^NOT_FOUND: /);
  });

  it('get_trace: the slim tree, children indented, without payloads', async () => {
    const { text, isError } = await call('get_trace', { traceId: 'checkout-1' });
    expect(isError).toBe(false);
    expect(text).toMatch(/^Trace \{"traceId":"checkout-1","name":"checkout"/);
    expect(text).toContain(
      '2 spans (tree order, children indented):\n- root "agent run" (agent, ok, 60000 ms)\n  - llm "chat" (llm.chat, ok, 60000 ms, gpt-4o, 120 tokens',
    );
    expect(text).not.toContain('parcel');
    expect(text).toContain('get_span {"traceId":"checkout-1","spanId":"<spanId>"}');
  });

  it('get_trace: a large tree comes in parts, each naming the next spanOffset', async () => {
    const seen: string[] = [];
    let args: Record<string, unknown> = { traceId: 'big-tree' };
    for (let part = 0; part < 20; part++) {
      const { text } = await call('get_trace', args);
      seen.push(...[...text.matchAll(/^\s*- (\S+) "/gm)].map((m) => m[1]!));
      if (!text.includes('Next part:')) break;
      expect(text).toMatch(/Spans \d+–\d+ of 701 shown/);
      args = nextCall(text, 'get_trace');
    }
    expect(seen).toHaveLength(701);
    expect(new Set(seen).size).toBe(701);
    // Depth-first: a page's children follow it.
    expect(seen.slice(0, 4)).toEqual(['root', 'page-000', 'page-001', 'page-002']);
  });

  it("get_trace: an unknown trace and another workspace's trace are tool errors with the service's message", async () => {
    const missing = await call('get_trace', { traceId: 'no-such-trace' });
    expect(missing.isError).toBe(true);
    expect(missing.text).toMatch(/^NOT_FOUND: /);
    const other = await call('get_trace', { traceId: 'only-in-b' });
    expect(other).toEqual({ isError: true, text: missing.text.replace('no-such-trace', 'only-in-b') });
    // An id both workspaces use answers the caller's own trace.
    expect((await call('get_trace', { traceId: 'checkout-1' })).text).not.toContain('b-checkout');
  });

  it('get_span: the whole span with its payloads', async () => {
    const { text } = await call('get_span', { traceId: 'checkout-1', spanId: 'llm' });
    expect(text).toMatch(/^Span \{"spanId":"llm","parentSpanId":"root","name":"chat","kind":"llm.chat"/);
    expect(text).toContain('input (');
    expect(text).toContain('where is my parcel');
    expect(text).toContain('{"text":"It ships tomorrow"}');
    expect(text).toContain('{"app.version":"7.1"}');
    const only = await call('get_span', { traceId: 'checkout-1', spanId: 'llm', field: 'output' });
    expect(only.text).not.toContain('parcel');
    expect(only.text).toContain('It ships tomorrow');
    const errored = await call('get_span', { traceId: 'checkout-2', spanId: 'root' });
    expect(errored.text).toContain('card declined');
  });

  it('get_span: a long payload is previewed, then read whole by field and offset', async () => {
    const whole = JSON.stringify({ text: longOutput });
    const preview = await call('get_span', { traceId: 'big-output', spanId: 'root' });
    expect(preview.text).toContain(`output (${whole.length} characters):\n${whole.slice(0, 4000)}\n`);
    let args = nextCall(preview.text, 'get_span');
    expect(args).toEqual({ traceId: 'big-output', spanId: 'root', field: 'output', offset: 4000 });
    let read = whole.slice(0, 4000);
    for (let part = 0; part < 10 && args; part++) {
      const { text } = await call('get_span', args);
      const body = text.split('\n')[2]!;
      expect(text.split('\n')[1]).toBe(`output (${whole.length} characters, from character ${String(args.offset)}):`);
      read += body;
      args = text.includes('read on:') ? nextCall(text, 'get_span') : undefined!;
    }
    expect(read).toBe(whole);
    const past = await call('get_span', { traceId: 'big-output', spanId: 'root', field: 'output', offset: whole.length + 1 });
    expect(past.text).toContain('offset');
    expect((await call('get_span', { traceId: 'only-in-b', spanId: 'root' })).text).toMatch(/^NOT_FOUND: /);
  });

  it('get_session: figures and the traces in start order, paged', async () => {
    const { text } = await call('get_session', { sessionId: 's-1' });
    const figures = JSON.parse(text.split('\n')[0]!.replace(/^Session /, '')) as Record<string, unknown>;
    expect(figures).toMatchObject({ sessionId: 's-1', traceCount: 2, traceErrorCount: 1, userIds: ['u-1', 'u-2'] });
    expect(traceIds(text)).toEqual(['checkout-1', 'checkout-2']);
    const first = await call('get_session', { sessionId: 's-1', limit: 1 });
    expect(traceIds(first.text)).toEqual(['checkout-1']);
    expect(traceIds((await call('get_session', nextCall(first.text, 'get_session'))).text)).toEqual(['checkout-2']);
    expect((await call('get_session', { sessionId: 's-b' })).text).toMatch(/^NOT_FOUND: /);
  });

  it('get_stats: groups as JSON lines; bad input comes back with its path', async () => {
    const { text } = await call('get_stats', { groupBy: 'model' });
    const groups = text
      .split('\n')
      .slice(1)
      .map((line) => JSON.parse(line) as { key: string | null; spanCount: number; totalTokens: number });
    expect(groups.find((g) => g.key === 'gpt-4o')).toMatchObject({ spanCount: 1, totalTokens: 120 });
    // By score name: the two traces annotated for helpfulness, with their mean (0.9 and 0.2).
    const byScore = (await call('get_stats', { groupBy: 'score' })).text
      .split('\n')
      .slice(1)
      .map((line) => JSON.parse(line) as { key: string | null; traceCount: number; scores: Record<string, { n: number; mean: number }> });
    const helpfulness = byScore.find((g) => g.key === 'helpfulness')!;
    expect(helpfulness.traceCount).toBe(2);
    expect(helpfulness.scores.helpfulness!.n).toBe(2);
    expect(helpfulness.scores.helpfulness!.mean).toBeCloseTo((0.9 + 0.2) / 2, 10);
    const bad = await call('get_stats', { from: ago(1), to: ago(60) });
    expect(bad.isError).toBe(true);
    expect(bad.text).toBe('VALIDATION_ERROR: Invalid request: querystring.from: must not be after to');
  });

  it("get_analytics: the workspace's totals, never another's", async () => {
    const { text } = await call('get_analytics', { budget: 10 });
    const totals = JSON.parse(/^totals: (.*)$/m.exec(text)![1]!) as { traceCount: number };
    expect(totals.traceCount).toBe(112);
    expect(text).toMatch(/^budget: \{"budgetUsd":10,/m);
    expect(text).toMatch(/^tokenUsageOverTime \(daily, 31 points\):/m);
  });

  it('run_sql: rows as JSON lines within the workspace, errors with the service message', async () => {
    const { text } = await call('run_sql', {
      query: 'SELECT trace_id, span_count FROM traces WHERE trace_id IN {ids:Array(String)} ORDER BY trace_id',
      parameters: { ids: ['checkout-1', 'only-in-b'] },
    });
    expect(text).toMatch(/^columns: trace_id String, span_count UInt\d+\n\["checkout-1",2\]\n\n1 rows; read \d+ rows/);
    const forbidden = await call('run_sql', { query: 'SELECT * FROM system.tables' });
    expect(forbidden.isError).toBe(true);
    expect(forbidden.text).toMatch(/^FORBIDDEN: Table system\.tables is out of reach/);
  });

  it('run_sql: many rows are cut with how to page; long cells are cut with how to read them', async () => {
    const rows = await call('run_sql', { query: "SELECT span_id, name FROM spans WHERE trace_id = 'big-tree' ORDER BY span_id" });
    const shown = rows.text.split('\n').filter((line) => line.startsWith('['));
    expect(shown.length).toBeGreaterThan(10);
    expect(shown.length).toBeLessThan(701);
    expect(rows.text).toContain('701 rows;');
    expect(rows.text).toContain(`Only the first ${shown.length} rows are shown`);
    expect(rows.text).toContain(`add LIMIT ${shown.length} with OFFSET`);
    const cell = await call('run_sql', { query: "SELECT output FROM spans WHERE trace_id = 'big-output'" });
    expect(cell.text).toContain('1 cells were cut at 2000 characters: read them with substring(column, start, length)');
    expect((JSON.parse(cell.text.split('\n')[1]!) as string[])[0]).toHaveLength(2000);
  });

  it('list_prompts, get_prompt and render_prompt: by name, label and version', async () => {
    const list = await call('list_prompts');
    expect(list.text).toContain('{"id":');
    expect(list.text).toContain('"name":"greeting","version":"1.1.0","labels":["latest"]');
    expect(list.text).not.toContain('b-only-prompt');
    expect((await call('list_prompts', { allVersions: true })).text).toContain('"version":"1.0.0","labels":["production"]');

    const latest = await call('get_prompt', { name: 'greeting' });
    expect(latest.text).toMatch(/^Prompt \{"id":\d+,"name":"greeting","version":"1.1.0"/);
    expect(latest.text).toContain('systemPrompt (24 characters):\nYou greet {name} warmly.');
    const production = await call('get_prompt', { name: 'greeting', label: 'production' });
    expect(production.text).toContain('"version":"1.0.0"');
    expect(production.text).toContain('humanPrompt (19 characters):\nSay hello to {name}');
    expect((await call('get_prompt', { name: 'greeting', version: '1.0.0' })).text).toContain('You greet {name} in {language}.');

    const rendered = await call('render_prompt', { name: 'greeting', label: 'production', variables: { name: 'Ada', extra: 1 } });
    expect(rendered.text).toMatch(
      /^Rendered \{"name":"greeting","version":"1.0.0","promptId":\d+,"missing":\["language"\],"unused":\["extra"\]\}/,
    );
    expect(rendered.text).toContain('systemPrompt (28 characters):\nYou greet Ada in {language}.');
    expect(rendered.text).toContain('Say hello to Ada');

    const missing = await call('get_prompt', { name: 'b-only-prompt' });
    expect(missing).toEqual({ isError: true, text: 'NOT_FOUND: Prompt b-only-prompt has no latest version' });
    expect((await call('render_prompt', { name: 'greeting', label: 'staging' })).text).toBe(
      'NOT_FOUND: Prompt greeting has no label staging',
    );
  });
});

describe('loupe mcp on stdio, misconfigured', () => {
  it('refuses to start without LOUPE_API_KEY', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [bin, 'mcp'],
      env: { ...(process.env as Record<string, string>), LOUPE_URL: baseUrl, LOUPE_API_KEY: '', LOG_LEVEL: 'silent' },
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const client = new Client({ name: 'loupe-test', version: '1.0.0' });
    await expect(client.connect(transport)).rejects.toThrow();
    expect(stderr).toContain('Set LOUPE_API_KEY');
  });

  it('answers a tool error when the service cannot be reached, and a wrong key as the service says', async () => {
    for (const [url, key, expected] of [
      ['http://127.0.0.1:9', a.key, /^SERVICE_UNAVAILABLE: Cannot reach Loupe at http:\/\/127\.0\.0\.1:9 \(LOUPE_URL\)/],
      [baseUrl, 'lpk_000000000000_wrong', /^UNAUTHORIZED: The API key is unknown or revoked/],
    ] as const) {
      const client = new Client({ name: 'loupe-test', version: '1.0.0' });
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [bin, 'mcp'],
          env: { ...(process.env as Record<string, string>), LOUPE_URL: url, LOUPE_API_KEY: key, LOG_LEVEL: 'silent' },
          stderr: 'pipe',
        }),
      );
      try {
        const result = await client.callTool({ name: 'search_traces', arguments: {} });
        expect(result.isError).toBe(true);
        expect((result.content as Array<{ text: string }>)[0]!.text).toMatch(expected);
      } finally {
        await client.close();
      }
    }
  });
});
