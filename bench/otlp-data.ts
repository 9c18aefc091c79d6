/**
 * OTLP export requests for the benchmarks: 64 traces of 8 GenAI spans (512 spans, the
 * OpenTelemetry batch processor's default export size), every trace id unique per phase and
 * request.
 */
export const tracesPerRequest = 64;
export const spansPerTrace = 8;
export const spansPerRequest = tracesPerRequest * spansPerTrace;

const question = 'Summarise the quarterly churn drivers and list three actions for the customer-success team, with owners and dates.';
const answer =
  'Churn rose among small accounts after the price change; enterprise expansion offset it. Actions: review pricing, onboarding calls, health-score alerts.';

const str = (v: string) => ({ stringValue: v });
const int = (v: number) => ({ intValue: String(v) });
const kv = (attrs: Record<string, { stringValue: string } | { intValue: string }>) =>
  Object.entries(attrs).map(([key, value]) => ({ key, value }));

/** One OTLP export of 64 traces; `phase` and `request` make every trace id unique. */
export function exportRequest(phase: number, request: number) {
  const base = 1748779200000000000n + BigInt(request) * 1_000_000_000n;
  const spans = [];
  for (let t = 0; t < tracesPerRequest; t++) {
    const traceId = Buffer.alloc(16);
    traceId.writeUInt32BE(phase + 1, 0);
    traceId.writeUInt32BE(request, 4);
    traceId.writeUInt32BE(t + 1, 12);
    const spanId = (n: number) => Buffer.from([0, 0, 0, 0, 0, 0, t + 1, n + 1]);
    const time = (ms: number) => String(base + BigInt(t) * 10_000_000n + BigInt(ms) * 1_000_000n + 123_456n);
    const span = (n: number, parent: number | undefined, name: string, from: number, to: number, attributes: ReturnType<typeof kv>) => ({
      traceId,
      spanId: spanId(n),
      ...(parent === undefined ? {} : { parentSpanId: spanId(parent) }),
      name,
      kind: 1,
      startTimeUnixNano: time(from),
      endTimeUnixNano: time(to),
      attributes,
      status: { code: 1 },
    });
    spans.push(
      span(
        0,
        undefined,
        'invoke_agent support',
        0,
        4000,
        kv({ 'gen_ai.operation.name': str('invoke_agent'), 'gen_ai.agent.name': str('support'), 'session.id': str(`s-${request}-${t}`) }),
      ),
    );
    for (let i = 0; i < 4; i++) {
      spans.push(
        span(
          1 + i,
          0,
          'chat gpt-4o-mini',
          100 + i * 900,
          800 + i * 900,
          kv({
            'gen_ai.operation.name': str('chat'),
            'gen_ai.provider.name': str('openai'),
            'gen_ai.request.model': str('gpt-4o-mini'),
            'gen_ai.usage.input_tokens': int(420 + i),
            'gen_ai.usage.output_tokens': int(96),
            'gen_ai.input.messages': str(JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: question }] }])),
            'gen_ai.output.messages': str(
              JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: answer }], finish_reason: 'stop' }]),
            ),
          }),
        ),
      );
    }
    for (let i = 0; i < 2; i++) {
      spans.push(
        span(
          5 + i,
          1 + i,
          'execute_tool lookup_account',
          810 + i * 900,
          880 + i * 900,
          kv({
            'gen_ai.operation.name': str('execute_tool'),
            'gen_ai.tool.name': str('lookup_account'),
            'gen_ai.tool.call.id': str(`call-${i}`),
            'gen_ai.tool.call.arguments': str('{"accountId":"acc-1","fields":["plan","seats"]}'),
            'gen_ai.tool.call.result': str('{"plan":"enterprise","seats":120}'),
          }),
        ),
      );
    }
    spans.push(span(7, 0, 'retrieval docs', 50, 95, kv({ 'gen_ai.operation.name': str('retrieval'), 'gen_ai.data_source.id': str('kb') })));
  }
  const resource = { attributes: kv({ 'service.name': str('bench-agent'), 'deployment.environment.name': str('production') }) };
  return { resourceSpans: [{ resource, scopeSpans: [{ scope: { name: 'bench', version: '1.0.0' }, spans }] }] };
}
