import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';

let ctx: TestContext;
let tenant: Tenant;
beforeAll(async () => {
  ctx = await createTestContext();
  tenant = await ctx.tenant();
});
afterAll(async () => {
  await ctx?.close();
});

type Json = Record<string, any>;

async function call(method: 'GET' | 'POST' | 'PUT', url: string, payload?: Json) {
  const res = await ctx.app.inject({ method, url, headers: tenant.headers, ...(payload ? { payload } : {}) });
  return { status: res.statusCode, body: res.json<Json>() };
}

describe('GET /api/prompt/:id/diff', () => {
  it('diffs two known versions: text hunks, JSON paths and template variables', async () => {
    const v1 = (
      await call('POST', '/api/prompt', {
        name: 'diff-me',
        systemPrompt: 'You are the agent of {company}.\nBe brief.\nSign as {agent}.',
        humanPrompt: 'Question: {question}',
        metadata: { model: 'gpt-4o', temperature: 0.2, tags: ['support'] },
        outputSchema: { type: 'object', properties: { answer: { type: 'string' } } },
      })
    ).body.data;
    const v2 = (
      await call('POST', `/api/prompt/${v1.id}/versions`, {
        newVersion: '1.1.0',
        changes: {
          systemPrompt: 'You are the agent of {company}.\nBe kind and brief.\nSign as {agent}.',
          humanPrompt: null,
          rawPrompt: '{history}',
          metadata: { model: 'gpt-4.1', tags: ['support', 'beta'] },
          outputSchema: { type: 'object', properties: { answer: { type: 'string' }, confidence: { type: 'number' } } },
          isLatest: true,
        },
        labels: ['staging'],
      })
    ).body.data;

    const res = await call('GET', `/api/prompt/${v2.id}/diff?against=${v1.id}`);
    expect(res.status).toBe(200);
    const diff = res.body.data;
    expect(diff.name).toBe('diff-me');
    expect(diff.from).toMatchObject({ id: v1.id, version: '1.0.0', labels: [] });
    expect(diff.to).toMatchObject({ id: v2.id, version: '1.1.0', isLatest: true, labels: ['latest', 'staging'] });
    expect(diff.systemPrompt).toEqual({
      changed: true,
      hunks: [
        {
          oldStart: 1,
          oldLines: 3,
          newStart: 1,
          newLines: 3,
          lines: [
            ' You are the agent of {company}.',
            '-Be brief.',
            '+Be kind and brief.',
            ' Sign as {agent}.',
            '\\ No newline at end of file',
          ],
        },
      ],
    });
    expect(diff.humanPrompt.hunks[0].lines).toEqual(['-Question: {question}', '\\ No newline at end of file']);
    expect(diff.rawPrompt.hunks[0].lines).toEqual(['+{history}', '\\ No newline at end of file']);
    expect(diff.metadata).toEqual({
      added: [{ path: "$['tags'][1]", value: 'beta' }],
      removed: [{ path: "$['temperature']", value: 0.2 }],
      changed: [{ path: "$['model']", from: 'gpt-4o', to: 'gpt-4.1' }],
    });
    expect(diff.outputSchema).toEqual({
      added: [{ path: "$['properties']['confidence']", value: { type: 'number' } }],
      removed: [],
      changed: [],
    });
    expect(diff.variables).toEqual({
      from: ['agent', 'company', 'question'],
      to: ['agent', 'company', 'history'],
      added: ['history'],
      removed: ['question'],
    });

    // The other way round, added and removed swap; a version against itself has no change.
    const back = (await call('GET', `/api/prompt/${v1.id}/diff?against=${v2.id}`)).body.data;
    expect(back.variables).toMatchObject({ added: ['question'], removed: ['history'] });
    const same = (await call('GET', `/api/prompt/${v1.id}/diff?against=${v1.id}`)).body.data;
    expect([same.systemPrompt.changed, same.humanPrompt.changed, same.metadata.changed.length]).toEqual([false, false, 0]);
  });

  it('answers 400 for a version of another prompt or a bad id, 404 for an unknown one', async () => {
    const a = (await call('POST', '/api/prompt', { name: 'diff-a', systemPrompt: 'a' })).body.data;
    const b = (await call('POST', '/api/prompt', { name: 'diff-b', systemPrompt: 'b' })).body.data;
    const other = await call('GET', `/api/prompt/${a.id}/diff?against=${b.id}`);
    expect(other.status).toBe(400);
    expect(other.body.error.details.issues[0].path).toBe('querystring.against');
    expect((await call('GET', `/api/prompt/${a.id}/diff`)).status).toBe(400);
    expect((await call('GET', `/api/prompt/${a.id}/diff?against=abc`)).status).toBe(400);
    expect((await call('GET', `/api/prompt/${a.id}/diff?against=999999`)).status).toBe(404);
    expect((await call('GET', `/api/prompt/999999/diff?against=${a.id}`)).status).toBe(404);
  });
});
