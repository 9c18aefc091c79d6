import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Loupe, type LoupeError } from '../../packages/sdk/src/index.js';
import { startListeningService, type ListeningService } from './sdk-server.js';

let service: ListeningService;
beforeAll(async () => {
  service = await startListeningService();
});
afterAll(async () => {
  await service?.close();
});

describe('loupe.experiment against the listening service', () => {
  it('runs the task over every item in traced spans, records scores and failures on their items, and resolves with the run figures', async () => {
    const created = await service.call('POST', '/api/datasets', { name: 'arithmetic' });
    expect(created.status).toBe(201);
    const datasetId = created.body.data.id as string;
    const items = Array.from({ length: 8 }, (_, i) => ({ id: `q${i}`, input: { a: i, b: 2 }, expectedOutput: i + 2 }));
    expect((await service.call('POST', `/api/datasets/${datasetId}/items`, { items })).status).toBe(200);

    const errors: LoupeError[] = [];
    const loupe = new Loupe({ apiKey: service.apiKey, baseUrl: service.baseUrl, env: {}, onError: (e) => errors.push(e) });
    let running = 0;
    let mostAtOnce = 0;
    const printed: string[] = [];
    const summary = await loupe.experiment({
      dataset: datasetId,
      name: 'adder-v1',
      metadata: { model: 'adder' },
      concurrency: 3,
      print: (text) => printed.push(text),
      task: async (item) => {
        running += 1;
        mostAtOnce = Math.max(mostAtOnce, running);
        await new Promise((resolve) => setTimeout(resolve, 5));
        running -= 1;
        const { a, b } = item.input as { a: number; b: number };
        if (a === 3) throw new Error('the adder broke');
        return a === 5 ? a * b : a + b;
      },
      evaluators: [
        (item, output) => ({ name: 'exact', value: output === item.expectedOutput }),
        (item, output) => {
          if ((item.input as { a: number }).a === 6) throw new Error('the judge is away');
          return [{ name: 'distance', value: Math.abs((output as number) - (item.expectedOutput as number)) }];
        },
      ],
    });
    await loupe.shutdown();
    expect(errors).toEqual([]);
    expect(mostAtOnce).toBeLessThanOrEqual(3);
    expect(mostAtOnce).toBeGreaterThan(1);

    // q3's task failed, q6's second evaluator failed: both recorded on their items, the run went on.
    expect(summary.failures).toEqual([
      { datasetItemId: 'q3', stage: 'task', message: 'the adder broke' },
      { datasetItemId: 'q6', stage: 'evaluator', message: 'the judge is away' },
    ]);
    expect(summary.items).toBe(8);
    expect(summary.errors).toBe(2);
    // 7 items scored exact: all but q5 (5·2 ≠ 7), so 6 of 7.
    const exact = summary.scores.find((s) => s.name === 'exact')!;
    expect(exact).toMatchObject({ dataType: 'boolean', n: 7 });
    expect(exact.mean).toBeCloseTo(6 / 7, 10);
    // distance on 6 items (q3's task and q6's evaluator failed): 0 except q5's |10 − 7| = 3.
    const distance = summary.scores.find((s) => s.name === 'distance')!;
    expect(distance).toMatchObject({ dataType: 'numeric', n: 6 });
    expect(distance.mean).toBeCloseTo(3 / 6, 10);
    expect(summary.latencyP50).not.toBeNull();
    expect(summary.url).toBe(`${service.baseUrl}/datasets/${datasetId}/runs/${summary.runId}`);
    expect(printed).toHaveLength(1);
    expect(printed[0]).toContain(summary.url);
    expect(printed[0]).toContain('exact: mean 0.8571');
    expect(printed[0]).toContain('error on q3 (task): the adder broke');

    // The service has the run: each item linked to its trace, that trace holding the span and its scores.
    const run = await service.call('GET', `/api/datasets/${datasetId}/runs/${summary.runId}?limit=100`);
    expect(run.body.data).toMatchObject({ name: 'adder-v1', metadata: { model: 'adder' }, itemCount: 8 });
    const q3 = run.body.data.items.find((i: { datasetItemId: string }) => i.datasetItemId === 'q3');
    expect(q3.error).toContain('the adder broke');
    expect(q3.failed).toBe(true);
    const q1 = run.body.data.items.find((i: { datasetItemId: string }) => i.datasetItemId === 'q1');
    expect(q1).toMatchObject({ output: 3, error: null, scores: { exact: 1, distance: 0 } });
    const trace = await service.call('GET', `/api/traces/${q1.traceId}`);
    expect(trace.status).toBe(200);
    expect(JSON.stringify(trace.body.data)).toContain('experiment adder-v1');
    const q6 = run.body.data.items.find((i: { datasetItemId: string }) => i.datasetItemId === 'q6');
    expect(q6.error).toContain('the judge is away');
    expect(q6.scores).toEqual({ exact: 1 });
  });
});
