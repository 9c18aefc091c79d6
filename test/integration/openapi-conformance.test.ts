import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';

/**
 * The OpenAPI document is the contract clients are generated from. This walks it: every
 * route the app serves must be documented, every documented operation gets a valid request
 * (from the table below) and a few invalid ones, and every answer's status and body must be
 * ones the document declares for that operation (checked with ajv against its schemas).
 * A route added without its documentation, or without an example here, fails.
 */

type Operation = {
  operationId: string;
  parameters?: Array<{ in: string; name: string; required?: boolean }>;
  requestBody?: { content: Record<string, unknown> };
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
};
type Document = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, unknown> } };
type Example = { url: string; payload?: unknown; headers?: Record<string, string> };

let ctx: TestContext;
let tenant: Tenant;
let document: Document;
let ajv: Ajv2020;
const unique = () => randomBytes(4).toString('hex');
const at = (ms: number) => new Date(Date.now() - 60_000 + ms).toISOString();
const trace = (traceId = `c-${unique()}`) => ({
  traceId,
  source: 'sdk',
  sessionId: 'conformance-session',
  userId: 'conformance-user',
  spans: [
    {
      spanId: 'root',
      name: 'root',
      kind: 'llm.chat',
      startTime: at(0),
      endTime: at(10),
      durationMs: 10,
      status: 'ok',
      model: 'm',
      inputTokens: 3,
    },
  ],
});
const otlp = () => ({
  resourceSpans: [
    {
      resource: { attributes: [{ key: 'service.name', value: { stringValue: 'svc' } }] },
      scopeSpans: [
        {
          spans: [
            {
              traceId: randomBytes(16).toString('hex'),
              spanId: randomBytes(8).toString('hex'),
              name: 'chat',
              kind: 1,
              startTimeUnixNano: String(BigInt(Date.now() - 1000) * 1_000_000n),
              endTimeUnixNano: String(BigInt(Date.now()) * 1_000_000n),
            },
          ],
        },
      ],
    },
  ],
});

const otlpLogs = () => ({
  resourceLogs: [
    {
      resource: { attributes: [] },
      scopeLogs: [
        {
          scope: { name: 'openai_v2' },
          logRecords: [
            {
              timeUnixNano: String(BigInt(Date.now()) * 1_000_000n),
              traceId: randomBytes(16).toString('hex'),
              spanId: randomBytes(8).toString('hex'),
              eventName: 'gen_ai.user.message',
              body: { kvlistValue: { values: [{ key: 'content', value: { stringValue: 'Hello' } }] } },
            },
          ],
        },
      ],
    },
  ],
});

const admin = async (url: string, payload: object) =>
  (await ctx.app.inject({ method: 'POST', url, headers: ctx.adminHeaders, payload })).json<{ data: Record<string, string> }>().data;
const authed = async (method: 'POST' | 'GET', url: string, payload?: object) =>
  (await ctx.app.inject({ method, url, headers: tenant.headers, ...(payload === undefined ? {} : { payload }) })).json<{
    data: Record<string, unknown>;
  }>().data;
const newPrompt = async () => (await authed('POST', '/api/prompt', { name: `p-${unique()}`, systemPrompt: 'Hello {name}' })).id as number;
let versions = 0;
const newScore = async () =>
  ((await authed('POST', '/api/scores', { name: 'quality', value: 1, traceId: `t-${unique()}` })).ids as string[])[0]!;
const newModelConnection = async () =>
  (
    await authed('POST', '/api/model-connections', {
      name: `m-${unique()}`,
      provider: 'openai',
      baseUrl: 'https://api.example.com/v1',
      apiKey: 'sk-conformance-key',
      defaultModel: 'm',
    })
  ).id as string;
const checkEvaluator = { type: 'check', check: { type: 'json_parse' }, score: { name: 'json', dataType: 'boolean' } };
const newEvaluator = async () => (await authed('POST', '/api/evaluators', { name: `e-${unique()}`, ...checkEvaluator })).id as string;
const newScoreConfig = async () =>
  (await authed('POST', '/api/score-configs', { name: `c-${unique()}`, dataType: 'numeric', min: 0 })).id as string;
const monitorBody = () => ({
  name: `m-${unique()}`,
  metric: 'cost',
  windowSeconds: 3600,
  filters: { environment: 'production' },
  condition: { kind: 'threshold', direction: 'above', value: 10 },
});
const newMonitor = async () => (await authed('POST', '/api/monitors', monitorBody())).id as string;
const newDataset = async () => (await authed('POST', '/api/datasets', { name: `d-${unique()}` })).id as string;
/** A dataset with one item `i1`: its path. */
const newDatasetItem = async () => {
  const id = await newDataset();
  await authed('POST', `/api/datasets/${id}/items`, { id: 'i1', input: { q: 1 } });
  return `/api/datasets/${id}/items/i1`;
};
/** A run over a dataset with one item `i1`: its path. */
const newDatasetRun = async () => {
  const id = await newDataset();
  await authed('POST', `/api/datasets/${id}/items`, { id: 'i1', input: { q: 1 } });
  const run = (await authed('POST', `/api/datasets/${id}/runs`, { name: `r-${unique()}` })).id as string;
  return `/api/datasets/${id}/runs/${run}`;
};

/** One valid request per operation, by "METHOD path" as the document names it. */
const examples: Record<string, () => Promise<Example>> = {
  'GET /healthz': async () => ({ url: '/healthz' }),
  'POST /api/admin/organizations': async () => ({ url: '/api/admin/organizations', payload: { name: `o-${unique()}`, plan: 'free' } }),
  'PATCH /api/admin/organizations/{organizationId}': async () => ({
    url: `/api/admin/organizations/${tenant.organizationId}`,
    payload: { plan: 'pro' },
  }),
  'POST /api/admin/organizations/{organizationId}/workspaces': async () => ({
    url: `/api/admin/organizations/${tenant.organizationId}/workspaces`,
    payload: { name: `w-${unique()}` },
  }),
  'POST /api/admin/users': async () => ({ url: '/api/admin/users', payload: { email: `u-${unique()}@example.test` } }),
  'PATCH /api/admin/users/{id}': async () => {
    const user = await admin('/api/admin/users', { email: `u-${unique()}@example.test` });
    return { url: `/api/admin/users/${user.id}`, payload: { externalSubject: `sub-${unique()}` } };
  },
  'POST /api/admin/organizations/{organizationId}/members': async () => {
    const user = await admin('/api/admin/users', { email: `u-${unique()}@example.test` });
    return { url: `/api/admin/organizations/${tenant.organizationId}/members`, payload: { userId: user.id } };
  },
  'POST /api/admin/api-keys': async () => ({
    url: '/api/admin/api-keys',
    payload: { scope: 'workspace', organizationId: tenant.organizationId, workspaceId: tenant.workspaceId },
  }),
  'GET /api/admin/api-keys': async () => ({ url: `/api/admin/api-keys?organizationId=${tenant.organizationId}` }),
  'DELETE /api/admin/api-keys/{id}': async () => {
    const key = await admin('/api/admin/api-keys', {
      scope: 'workspace',
      organizationId: tenant.organizationId,
      workspaceId: tenant.workspaceId,
    });
    return { url: `/api/admin/api-keys/${key.id}` };
  },
  'GET /api/admin/workspaces/{workspaceId}/retention': async () => ({ url: `/api/admin/workspaces/${tenant.workspaceId}/retention` }),
  'PUT /api/admin/workspaces/{workspaceId}/retention': async () => ({
    url: `/api/admin/workspaces/${tenant.workspaceId}/retention`,
    payload: { retentionDays: 3650, environments: { development: 3650 } },
  }),
  'POST /api/admin/retention/apply': async () => ({ url: '/api/admin/retention/apply', payload: { workspaceId: tenant.workspaceId } }),
  'GET /api/retention': async () => ({ url: '/api/retention' }),
  'GET /api/usage': async () => ({ url: '/api/usage' }),
  'GET /api/me': async () => ({ url: '/api/me' }),
  'POST /api/traces': async () => ({ url: '/api/traces', payload: { traces: [trace()] } }),
  'GET /api/traces': async () => ({ url: '/api/traces?limit=5&include=spans' }),
  'POST /api/traces/batch': async () => ({ url: '/api/traces/batch', payload: { traces: [trace(), trace()] } }),
  'GET /api/traces/{id}': async () => {
    const id = `c-${unique()}`;
    await authed('POST', '/api/traces', { traces: [trace(id)] });
    return { url: `/api/traces/${id}` };
  },
  'GET /api/traces/{id}/tree': async () => {
    const id = `c-${unique()}`;
    await authed('POST', '/api/traces', { traces: [trace(id)] });
    return { url: `/api/traces/${id}/tree` };
  },
  'GET /api/traces/{id}/spans/{spanId}': async () => {
    const id = `c-${unique()}`;
    await authed('POST', '/api/traces', { traces: [trace(id)] });
    return { url: `/api/traces/${id}/spans/root` };
  },
  'DELETE /api/traces/{id}': async () => {
    const id = `c-${unique()}`;
    await authed('POST', '/api/traces', { traces: [trace(id)] });
    return { url: `/api/traces/${id}` };
  },
  'GET /api/traces/stats': async () => ({ url: '/api/traces/stats?groupBy=model' }),
  'GET /api/traces/analytics': async () => ({ url: '/api/traces/analytics?budget=10' }),
  'POST /api/traces/otlp': async () => ({ url: '/api/traces/otlp', payload: otlp() }),
  'POST /api/traces/otlp/v1/traces': async () => ({ url: '/api/traces/otlp/v1/traces', payload: otlp() }),
  'POST /api/traces/otlp/v1/logs': async () => ({ url: '/api/traces/otlp/v1/logs', payload: otlpLogs() }),
  'POST /api/public/otel': async () => ({ url: '/api/public/otel', payload: otlp() }),
  'POST /api/public/otel/v1/traces': async () => ({ url: '/api/public/otel/v1/traces', payload: otlp() }),
  'POST /api/public/otel/v1/logs': async () => ({ url: '/api/public/otel/v1/logs', payload: otlpLogs() }),
  'POST /api/prompt': async () => ({ url: '/api/prompt', payload: { name: `p-${unique()}`, systemPrompt: 'Hi', metadata: { team: 'a' } } }),
  'GET /api/prompt': async () => ({ url: '/api/prompt?isLatest=true&limit=5' }),
  'GET /api/prompt/{id}': async () => ({ url: `/api/prompt/${await newPrompt()}` }),
  'PATCH /api/prompt/{id}': async () => ({ url: `/api/prompt/${await newPrompt()}`, payload: { systemPrompt: 'changed' } }),
  'DELETE /api/prompt/{id}': async () => ({ url: `/api/prompt/${await newPrompt()}` }),
  'POST /api/prompt/{id}/versions': async () => ({
    url: `/api/prompt/${await newPrompt()}/versions`,
    payload: { newVersion: `2.${(versions += 1)}.0`, changes: { description: 'next' } },
  }),
  'POST /api/prompt/{id}/render': async () => ({ url: `/api/prompt/${await newPrompt()}/render`, payload: { variables: { name: 'Ada' } } }),
  'GET /api/sessions': async () => ({ url: '/api/sessions?limit=5' }),
  'GET /api/sessions/{sessionId}': async () => {
    await authed('POST', '/api/traces', { traces: [trace()] });
    return { url: '/api/sessions/conformance-session' };
  },
  'GET /api/users': async () => ({ url: '/api/users?limit=5' }),
  'GET /api/users/{userId}': async () => {
    await authed('POST', '/api/traces', { traces: [trace()] });
    return { url: '/api/users/conformance-user' };
  },
  'GET /api/session': async () => {
    await authed('POST', '/api/traces', { traces: [trace()] });
    return { url: '/api/session?sessionId=conformance-session' };
  },
  'GET /api/user': async () => {
    await authed('POST', '/api/traces', { traces: [trace()] });
    return { url: '/api/user?userId=conformance-user' };
  },
  'GET /api/prompt/resolve': async () => {
    const name = `p-${unique()}`;
    await authed('POST', '/api/prompt', { name, systemPrompt: 'Hi' });
    return { url: `/api/prompt/resolve?name=${name}&label=latest` };
  },
  'PUT /api/prompt/{id}/labels/{label}': async () => ({ url: `/api/prompt/${await newPrompt()}/labels/production` }),
  'DELETE /api/prompt/{id}/labels/{label}': async () => {
    const id = await newPrompt();
    await ctx.app.inject({ method: 'PUT', url: `/api/prompt/${id}/labels/staging`, headers: tenant.headers });
    return { url: `/api/prompt/${id}/labels/staging` };
  },
  'GET /api/prompt/{id}/label-history': async () => ({ url: `/api/prompt/${await newPrompt()}/label-history` }),
  'GET /api/prompt/{id}/diff': async () => {
    const id = await newPrompt();
    const next = (
      await ctx.app.inject({ method: 'PATCH', url: `/api/prompt/${id}`, headers: tenant.headers, payload: { systemPrompt: 'Bye' } })
    ).json<{
      data: { id: number };
    }>().data;
    return { url: `/api/prompt/${next.id}/diff?against=${id}` };
  },
  'GET /api/prompt/{id}/metrics': async () => ({ url: `/api/prompt/${await newPrompt()}/metrics` }),
  'GET /api/prompt/{id}/compare': async () => ({ url: `/api/prompt/${await newPrompt()}/compare?against=${await newPrompt()}` }),
  'POST /api/webhooks': async () => ({
    url: '/api/webhooks',
    payload: { url: `https://hooks.example.com/${unique()}`, events: ['prompt.deleted'] },
  }),
  'GET /api/webhooks': async () => ({ url: '/api/webhooks' }),
  'POST /api/sql': async () => ({ url: '/api/sql', payload: { query: 'SELECT count() AS n FROM traces' } }),
  'GET /api/webhooks/{id}': async () => ({ url: `/api/webhooks/${(await newWebhook()).id}` }),
  'DELETE /api/webhooks/{id}': async () => ({ url: `/api/webhooks/${(await newWebhook()).id}` }),
  'GET /api/webhooks/{id}/deliveries': async () => ({ url: `/api/webhooks/${(await newWebhook()).id}/deliveries` }),
  'POST /api/models': async () => ({
    url: '/api/models',
    payload: { model: `m-${unique()}`, matchType: 'exact', inputPerMillion: 1, outputPerMillion: 2 },
  }),
  'GET /api/models': async () => ({ url: '/api/models' }),
  'GET /api/models/price': async () => ({ url: '/api/models/price?model=gpt-4o&provider=openai' }),
  'GET /api/models/unpriced': async () => ({ url: '/api/models/unpriced' }),
  'POST /api/models/reprice': async () => ({
    url: '/api/models/reprice',
    payload: { startAfter: at(-3_600_000), startBefore: at(60_000) },
  }),
  // MCP's streamable HTTP asks clients to accept both JSON and event streams.
  'POST /mcp': async () => ({
    url: '/mcp',
    payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    headers: { accept: 'application/json, text/event-stream' },
  }),
  'DELETE /api/models/{id}': async () => {
    const price = await authed('POST', '/api/models', {
      model: `m-${unique()}`,
      matchType: 'exact',
      inputPerMillion: 1,
      outputPerMillion: 2,
    });
    return { url: `/api/models/${String(price.id)}` };
  },
  'POST /api/scores': async () => ({ url: '/api/scores', payload: { name: 'quality', value: 0.5, traceId: `t-${unique()}` } }),
  'GET /api/scores': async () => ({ url: '/api/scores?name=quality' }),
  'POST /api/public/scores': async () => ({ url: '/api/public/scores', payload: { name: 'q', value: 1, traceId: `t-${unique()}` } }),
  'POST /api/public/ingestion': async () => ({
    url: '/api/public/ingestion',
    payload: { batch: [{ id: 'e', type: 'score-create', body: { name: 'q', value: 1, traceId: `t-${unique()}` } }] },
  }),
  'GET /api/scores/analytics': async () => ({ url: '/api/scores/analytics?interval=hour' }),
  'GET /api/scores/{id}': async () => ({ url: `/api/scores/${await newScore()}` }),
  'DELETE /api/scores/{id}': async () => ({ url: `/api/scores/${await newScore()}` }),
  'POST /api/score-configs': async () => ({ url: '/api/score-configs', payload: { name: `c-${unique()}`, dataType: 'boolean' } }),
  'GET /api/score-configs': async () => ({ url: '/api/score-configs' }),
  'GET /api/score-configs/{id}': async () => ({ url: `/api/score-configs/${await newScoreConfig()}` }),
  'PATCH /api/score-configs/{id}': async () => ({ url: `/api/score-configs/${await newScoreConfig()}`, payload: { max: 10 } }),
  'DELETE /api/score-configs/{id}': async () => ({ url: `/api/score-configs/${await newScoreConfig()}` }),
  'POST /api/model-connections': async () => ({
    url: '/api/model-connections',
    payload: {
      name: `m-${unique()}`,
      provider: 'anthropic',
      baseUrl: 'https://api.example.com/v1',
      apiKey: 'sk-x-1234',
      defaultModel: 'm',
    },
  }),
  'GET /api/model-connections': async () => ({ url: '/api/model-connections' }),
  'GET /api/model-connections/{id}': async () => ({ url: `/api/model-connections/${await newModelConnection()}` }),
  'PATCH /api/model-connections/{id}': async () => ({
    url: `/api/model-connections/${await newModelConnection()}`,
    payload: { defaultModel: 'n' },
  }),
  'DELETE /api/model-connections/{id}': async () => ({ url: `/api/model-connections/${await newModelConnection()}` }),
  // api.example.com does not resolve here: the test answers 200 with the error.
  'POST /api/model-connections/{id}/test': async () => ({ url: `/api/model-connections/${await newModelConnection()}/test` }),
  'POST /api/evaluators': async () => ({ url: '/api/evaluators', payload: { name: `e-${unique()}`, ...checkEvaluator } }),
  'GET /api/evaluators': async () => ({ url: '/api/evaluators' }),
  'GET /api/evaluators/{id}': async () => ({ url: `/api/evaluators/${await newEvaluator()}` }),
  'PUT /api/evaluators/{id}': async () => ({
    url: `/api/evaluators/${await newEvaluator()}`,
    payload: { name: `e-${unique()}`, ...checkEvaluator },
  }),
  'POST /api/evaluators/{id}/pause': async () => ({ url: `/api/evaluators/${await newEvaluator()}/pause` }),
  'POST /api/evaluators/{id}/resume': async () => ({ url: `/api/evaluators/${await newEvaluator()}/resume` }),
  'DELETE /api/evaluators/{id}': async () => ({ url: `/api/evaluators/${await newEvaluator()}` }),
  'POST /api/evaluators/preview': async () => {
    const id = `c-${unique()}`;
    await authed('POST', '/api/traces', { traces: [trace(id)] });
    await ctx.writer.settled();
    return { url: '/api/evaluators/preview', payload: { name: 'preview', ...checkEvaluator, traceId: id } };
  },
  'GET /api/evaluators/{id}/jobs': async () => ({ url: `/api/evaluators/${await newEvaluator()}/jobs?status=failed` }),
  'POST /api/evaluators/{id}/backfill': async () => ({
    url: `/api/evaluators/${await newEvaluator()}/backfill`,
    payload: { from: new Date(Date.now() - 3_600_000).toISOString(), maxJobs: 10 },
  }),
  'POST /api/monitors': async () => ({ url: '/api/monitors', payload: monitorBody() }),
  'GET /api/monitors': async () => ({ url: '/api/monitors' }),
  'GET /api/monitors/{id}': async () => ({ url: `/api/monitors/${await newMonitor()}` }),
  'PUT /api/monitors/{id}': async () => ({ url: `/api/monitors/${await newMonitor()}`, payload: monitorBody() }),
  'DELETE /api/monitors/{id}': async () => ({ url: `/api/monitors/${await newMonitor()}` }),
  'GET /api/monitors/{id}/history': async () => ({ url: `/api/monitors/${await newMonitor()}/history?limit=10` }),
  'POST /api/datasets': async () => ({ url: '/api/datasets', payload: { name: `d-${unique()}`, inputSchema: { type: 'object' } } }),
  'GET /api/datasets': async () => ({ url: '/api/datasets' }),
  'GET /api/datasets/{id}': async () => ({ url: `/api/datasets/${await newDataset()}` }),
  'PATCH /api/datasets/{id}': async () => ({ url: `/api/datasets/${await newDataset()}`, payload: { description: 'd' } }),
  'DELETE /api/datasets/{id}': async () => ({ url: `/api/datasets/${await newDataset()}` }),
  'POST /api/datasets/{id}/items': async () => ({
    url: `/api/datasets/${await newDataset()}/items`,
    payload: { items: [{ id: 'a', input: { q: 'why' }, expectedOutput: 'because' }] },
  }),
  'GET /api/datasets/{id}/items': async () => ({ url: `${(await newDatasetItem()).replace(/\/i1$/, '')}?limit=10` }),
  'POST /api/datasets/{id}/items/from-span': async () => {
    const traceId = `t-${unique()}`;
    await ctx.app.inject({
      method: 'POST',
      url: '/api/traces',
      headers: tenant.headers,
      payload: {
        traces: [
          {
            traceId,
            source: 'sdk',
            spans: [
              {
                spanId: 's1',
                name: 'step',
                kind: 'tool',
                input: { text: 'q' },
                output: { text: 'a' },
                startTime: '2025-01-01T10:00:00.000Z',
                endTime: '2025-01-01T10:00:01.000Z',
                durationMs: 1000,
                status: 'ok',
              },
            ],
          },
        ],
      },
    });
    return { url: `/api/datasets/${await newDataset()}/items/from-span`, payload: { traceId, spanId: 's1' } };
  },
  'GET /api/datasets/{id}/items/{itemId}': async () => ({ url: await newDatasetItem() }),
  'GET /api/datasets/{id}/items/{itemId}/versions': async () => ({ url: `${await newDatasetItem()}/versions` }),
  'POST /api/datasets/{id}/items/{itemId}/archive': async () => ({ url: `${await newDatasetItem()}/archive` }),
  'POST /api/datasets/{id}/items/{itemId}/unarchive': async () => ({ url: `${await newDatasetItem()}/unarchive` }),
  'POST /api/datasets/{id}/runs': async () => ({
    url: `/api/datasets/${await newDataset()}/runs`,
    payload: { name: 'r', metadata: { model: 'm' }, datasetVersion: new Date().toISOString() },
  }),
  'GET /api/datasets/{id}/runs': async () => ({ url: `/api/datasets/${await newDataset()}/runs` }),
  'GET /api/datasets/{id}/runs/{runId}': async () => ({ url: await newDatasetRun() }),
  'PATCH /api/datasets/{id}/runs/{runId}': async () => ({ url: await newDatasetRun(), payload: { description: 'd' } }),
  'DELETE /api/datasets/{id}/runs/{runId}': async () => ({ url: await newDatasetRun() }),
  'POST /api/datasets/{id}/runs/{runId}/items': async () => ({
    url: `${await newDatasetRun()}/items`,
    payload: { items: [{ datasetItemId: 'i1', traceId: 't1', output: 'o' }] },
  }),
  'GET /api/datasets/{id}/runs/{runId}/items': async () => ({ url: `${await newDatasetRun()}/items?limit=5` }),
  'GET /api/datasets/{id}/runs/compare': async () => ({ url: await comparedRunsUrl('compare') }),
  'GET /api/datasets/{id}/runs/compare/items': async () => ({ url: await comparedRunsUrl('compare/items') }),
};
/** Two runs of a new dataset, the first with an item, compared at `path` (under …/runs/). */
async function comparedRunsUrl(path: string) {
  const first = await newDatasetRun();
  const datasetPath = first.slice(0, first.lastIndexOf('/'));
  const second = (await authed('POST', datasetPath, { name: `r-${unique()}` })).id as string;
  await authed('POST', `${first}/items`, { datasetItemId: 'i1', traceId: 't1', output: 'o' });
  return `${datasetPath}/${path}?runs=${first.slice(first.lastIndexOf('/') + 1)},${second}&limit=5`;
}
const newWebhook = async () =>
  (await authed('POST', '/api/webhooks', { url: `https://hooks.example.com/${unique()}`, events: ['prompt.deleted'] })) as { id: string };

beforeAll(async () => {
  // The console's pages are not API operations (test/integration/console-serving.test.ts).
  ctx = await createTestContext({ deps: { consoleDir: false }, env: { LOUPE_ENCRYPTION_KEY: 'cd'.repeat(32) } });
  tenant = await ctx.tenant();
  document = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json<Document>();
  ajv = new Ajv2020({ strict: false, allErrors: true });
  for (const format of ['uuid', 'date-time', 'email', 'uri', 'binary', 'int64', 'int32']) ajv.addFormat(format, true);
  ajv.addSchema({ $id: 'openapi', components: document.components }, 'openapi');
});
afterAll(async () => {
  await ctx?.close();
});

const operations = () =>
  Object.entries(document.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ path, method: method.toUpperCase(), op })),
  );

const validators = new Map<unknown, ValidateFunction>();
function validatorFor(schema: unknown): ValidateFunction {
  let validate = validators.get(schema);
  if (!validate) {
    const rewritten = JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"openapi#/components/')) as object;
    validate = ajv.compile(rewritten);
    validators.set(schema, validate);
  }
  return validate;
}

/** The answer's status and body are ones the document declares for the operation. */
function expectDeclared(op: Operation, res: LightMyRequestResponse, what: string) {
  const declared = Object.keys(op.responses);
  expect(declared, `${op.operationId} (${what}) answered ${res.statusCode}, not in its document: ${res.body.slice(0, 300)}`).toContain(
    String(res.statusCode),
  );
  const type = String(res.headers['content-type'] ?? '').split(';')[0]!;
  const content = op.responses[String(res.statusCode)]!.content;
  if (!content) return;
  expect(Object.keys(content), `${op.operationId} (${what}): content type ${type}`).toContain(type);
  if (type !== 'application/json') return;
  const validate = validatorFor(content[type]!.schema);
  const body: unknown = res.json();
  expect(
    validate(body),
    `${op.operationId} (${what}) ${res.statusCode}: ${ajv.errorsText(validate.errors)}\n${res.body.slice(0, 500)}`,
  ).toBe(true);
}

function headersFor(path: string): Record<string, string> {
  if (path === '/healthz') return {};
  return path.startsWith('/api/admin') ? ctx.adminHeaders : tenant.headers;
}

describe('the OpenAPI document', () => {
  it('is printed without any store, as the console build generates its client from it', () => {
    // scripts/openapi.ts builds the app over stand-ins that throw on any use: building the app
    // must not touch a database (the build runs at npm install, before any store exists).
    const out = execFileSync(process.execPath, ['--import', 'tsx', 'scripts/openapi.ts'], {
      encoding: 'utf8',
      timeout: 60_000,
      // The document is over a mebibyte, execFileSync's default buffer.
      maxBuffer: 64 * 1024 * 1024,
    });
    const printed = JSON.parse(out) as Document;
    // The served document drops the trailing slash of a prefix's root route; the printed one keeps it.
    const paths = (doc: Document) => Object.keys(doc.paths).map((p) => (p.length > 1 ? p.replace(/\/$/, '') : p));
    expect(paths(printed).sort()).toEqual(paths(document).sort());
  });

  it('documents every route the app serves, once, without a trailing slash', () => {
    const documented = new Set(operations().map(({ method, path }) => `${method} ${path}`));
    // printRoutes draws a tree: each line adds its segment to its parent's path.
    const stack: string[] = [];
    const served = ctx.app
      .printRoutes({ commonPrefix: false })
      .split('\n')
      .flatMap((line) => {
        const match = /^([│ ]*)[├└]── (\S+)(?: \(([A-Z, ]+)\))?/.exec(line);
        if (!match) return [];
        const depth = match[1]!.length / 4;
        const path = (stack[depth] = (depth > 0 ? stack[depth - 1]! : '') + match[2]!).replace(/:([A-Za-z]+)/g, '{$1}');
        return (match[3] ?? '')
          .split(', ')
          .filter(Boolean)
          .map((method) => ({ method, path }));
      })
      .filter(({ method, path }) => method !== 'HEAD' && method !== 'OPTIONS' && path !== '/openapi.json' && !path.startsWith('/docs'))
      // The stateless MCP server answers GET and DELETE /mcp with 405, as its protocol asks: no operations.
      .filter(({ method, path }) => !(/^\/mcp\/?$/.test(path) && (method === 'GET' || method === 'DELETE')));
    expect(served.length).toBeGreaterThan(10);
    for (const { method, path } of served) {
      const normalized = path.length > 1 ? path.replace(/\/$/, '') : path;
      expect(documented, `${method} ${path} is served but not documented`).toContain(`${method} ${normalized}`);
    }
    for (const key of documented) expect(key).not.toMatch(/.\/$/);
    const ids = operations().map(({ op }) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(document.components.schemas.ErrorEnvelope).toBeDefined();
  });

  it('has a valid example request for every operation, and every answer to it is declared', async () => {
    for (const { method, path, op } of operations()) {
      const example = examples[`${method} ${path}`];
      expect(example, `add an example request for ${method} ${path} to this test`).toBeDefined();
      const { url, payload, headers } = await example!();
      const res = await ctx.app.inject({
        method: method as InjectOptions['method'],
        url,
        headers: { ...headersFor(path), ...headers },
        payload: payload as InjectOptions['payload'],
      });
      expect(res.statusCode, `${method} ${path}: ${res.body.slice(0, 300)}`).toBeLessThan(300);
      expectDeclared(op, res, 'valid request');
    }
  });

  it('declares every answer to invalid requests: no credential, bad headers, query, path and body', async () => {
    for (const { method, path, op } of operations()) {
      const example = await examples[`${method} ${path}`]!();
      const send = async (what: string, options: Omit<InjectOptions, 'method'>) =>
        expectDeclared(op, await ctx.app.inject({ method: method as InjectOptions['method'], ...options }), what);
      const headers = { ...headersFor(path), ...example.headers };
      const body = example.payload === undefined ? {} : { payload: example.payload as InjectOptions['payload'] };

      if (path !== '/healthz') {
        await send('no credential', { url: example.url, ...body });
        await send('a wrong credential', {
          url: example.url,
          headers: path.startsWith('/api/admin')
            ? { 'x-admin-token': 'wrong-wrong-wrong-wrong' }
            : { 'x-api-key': 'lpk_000000000000_wrong' },
          ...body,
        });
      }
      if (path.startsWith('/api/') && !path.startsWith('/api/admin')) {
        await send('a bad x-workspace-id', { url: example.url, headers: { ...headers, 'x-workspace-id': 'nope' }, ...body });
      }
      const [base, query = ''] = example.url.split('?');
      await send('an unknown query parameter', { url: `${base}?${query}${query ? '&' : ''}zzUnknown=1`, headers, ...body });
      if (op.parameters?.some((p) => p.in === 'query')) {
        for (const p of op.parameters.filter((p) => p.in === 'query')) {
          await send(`a bad ${p.name}`, { url: `${base}?${p.name}=%00%00bad`, headers, ...body });
        }
      }
      if (path.includes('{')) {
        const segments = path.split('/');
        const concrete = base!.split('/');
        for (const bad of ['x'.repeat(129), '%zz', '0', '00000000-0000-4000-8000-000000000000']) {
          const url = segments.map((s, i) => (s.startsWith('{') ? bad : concrete[i])).join('/');
          await send(`path parameter ${bad.slice(0, 12)}`, { url, headers, ...body });
        }
      }
      if (op.requestBody || example.payload !== undefined) {
        const json = { ...headers, 'content-type': 'application/json' };
        await send('malformed JSON', { url: example.url, headers: json, payload: '{' });
        await send('a JSON array', { url: example.url, headers: json, payload: '[]' });
        await send('an unknown field', { url: example.url, headers, payload: { ...(example.payload as object), zzUnknown: 1 } });
        await send('an unsupported type', {
          url: example.url,
          headers: { ...headers, 'content-type': 'application/xml' },
          payload: '<x/>',
        });
        await send('an unsupported encoding', { url: example.url, headers: { ...json, 'content-encoding': 'br' }, payload: '{}' });
        await send('a body over the limit', {
          url: example.url,
          headers: json,
          payload: `{"pad":"${'x'.repeat(ctx.config.LOUPE_BODY_LIMIT)}"}`,
        });
      }
    }
  });
});
