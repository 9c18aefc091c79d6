/**
 * Traces a small fake agent against a running Loupe service.
 *
 *   LOUPE_API_KEY=lpk_… LOUPE_BASE_URL=http://127.0.0.1:3000 npx tsx examples/trace-agent.ts
 *
 * It sends one agent trace (retrieval, a failing tool, an LLM call with usage) and one
 * coding-assistant session, then prints how to read them back.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Loupe } from '@loupe/sdk';

const loupe = new Loupe({
  environment: 'development',
  onError: (error) => console.error(`loupe: ${error.kind}: ${error.message}`),
});
if (!loupe.options.apiKey) {
  console.error('Set LOUPE_API_KEY (and LOUPE_BASE_URL if the service is not on 127.0.0.1:3000).');
  process.exit(1);
}

const searchDocs = loupe.wrap(
  async (query: string) => {
    await sleep(20);
    return [{ content: `The warranty covers ${query} for two years.`, score: 0.82 }];
  },
  { name: 'search-docs', kind: 'retrieval' },
);

const lookUpOrder = loupe.wrap(
  async (orderId: string) => {
    await sleep(10);
    throw new Error(`order ${orderId} not found`);
  },
  { name: 'look-up-order', kind: 'tool' },
);

async function chat(question: string, context: string): Promise<string> {
  return loupe.withSpan(
    'chat',
    { kind: 'llm.chat', input: { messages: [{ role: 'user', content: `${context}\n\n${question}` }] } },
    async (span) => {
      await sleep(60); // the model "thinks"
      const answer = 'Yes: the warranty covers it for two years.';
      span.setMetrics({ model: 'fake-gpt', provider: 'example', inputTokens: 212, outputTokens: 14, costUsd: 0.00031 });
      span.setOutput({ messages: [{ role: 'assistant', content: answer }] });
      return answer;
    },
  );
}

const supportAgent = loupe.wrap(
  async (question: string) => {
    const docs = await searchDocs(question);
    const order = await lookUpOrder('A-1001').catch((error: Error) => error.message);
    return chat(question, [...docs.map((d) => d.content), order].join('\n'));
  },
  { name: 'support-agent', kind: 'agent' },
);

const answer = await supportAgent('Is my broken kettle under warranty?');
console.log(`agent answered: ${answer}`);

// The coding-assistant session convention: root agent, a chain per turn, tools, a sub-agent.
const session = loupe.session({ name: 'coding-session' });
session.start({ cwd: process.cwd() });
session.turn('Rename the config loader');
session.toolCall('Grep', { pattern: 'loadConfig' }).ok(['src/config.ts', 'src/server.ts']);
const reviewer = session.subAgent('reviewer', { input: 'check the rename' });
reviewer.toolCall('Read', { file_path: 'src/config.ts' }).ok('…');
reviewer.end('the rename is complete');
session.toolCall('Bash', { command: 'npm test' }).fail('1 test failed');
session.compaction({ trigger: 'auto', tokensBefore: 150_000 });
session.stop({ output: 'Renamed; one test still fails.' });
session.end();

await loupe.shutdown();
const { sent, rejected, dropped } = loupe.stats();
console.log(`spans sent: ${sent}, rejected: ${rejected}, dropped: ${dropped}`);
console.log(`read them back: curl -H "x-api-key: $LOUPE_API_KEY" "${loupe.options.baseUrl}/api/traces?environment=development"`);
console.log(
  `the session:    curl -H "x-api-key: $LOUPE_API_KEY" "${loupe.options.baseUrl}/api/traces?sessionId=${session.sessionId}&include=spans"`,
);
