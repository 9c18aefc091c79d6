/** Wire types of the console, all taken from the API's generated OpenAPI types (schema.d.ts). */
import type { paths } from './schema';

type Json<R> = R extends { content: { 'application/json': infer B } } ? B : never;
type Success<Op> = Op extends { responses: infer R }
  ? R extends { 200: infer A }
    ? Json<A>
    : R extends { 201: infer B }
      ? Json<B>
      : never
  : never;
type Body<P extends keyof paths, M extends keyof paths[P]> = Success<paths[P][M]>;

export type Me = Body<'/api/me', 'get'>['data'];
export type TraceList = Body<'/api/traces/', 'get'>;
export type TraceListItem = TraceList['data'][number];
export type TraceListQuery = NonNullable<paths['/api/traces/']['get']['parameters']['query']>;
export type TraceDetail = Body<'/api/traces/{id}', 'get'>['data'];
export type Span = TraceDetail['spans'][number];
/** A trace with slim spans (no payloads): what the trace page's tree and waterfall draw. */
export type TraceTree = Body<'/api/traces/{id}/tree', 'get'>['data'];
export type SpanNode = TraceTree['spans'][number];
export type SpanIO = NonNullable<Span['input']>;
export type ChatMessage = NonNullable<SpanIO['messages']>[number];
export type ToolCall = NonNullable<SpanIO['toolCalls']>[number];
export type SpanKind = Span['kind'];
export type Stats = Body<'/api/traces/stats', 'get'>['data'];
export type StatsGroupBy = NonNullable<NonNullable<paths['/api/traces/stats']['get']['parameters']['query']>['groupBy']>;
export type Analytics = Body<'/api/traces/analytics', 'get'>['data'];
export type Prompt = Body<'/api/prompt/', 'get'>['data'][number];
export type NewVersionBody = NonNullable<paths['/api/prompt/{id}/versions']['post']['requestBody']>['content']['application/json'];
export type Rendered = Body<'/api/prompt/{id}/render', 'post'>['data'];
export type Score = NonNullable<TraceTree['scores']>[number];
export type ScoreConfig = Body<'/api/score-configs/', 'get'>['data'][number];
export type NewScoreConfig = NonNullable<paths['/api/score-configs/']['post']['requestBody']>['content']['application/json'];
export type PromptComparison = Body<'/api/prompt/{id}/compare', 'get'>['data'];
export type ScoreComparison = PromptComparison['scores'][number];
export type ScoreAnalytics = Body<'/api/scores/analytics', 'get'>['data'];
export type ScoreNameAnalytics = ScoreAnalytics['scores'][number];
export type Dataset = Body<'/api/datasets/', 'get'>['data'][number];
export type NewDataset = NonNullable<paths['/api/datasets/']['post']['requestBody']>['content']['application/json'];
export type DatasetItem = Body<'/api/datasets/{id}/items', 'get'>['data'][number];
export type Run = Body<'/api/datasets/{id}/runs', 'get'>['data'][number];
export type RunWithFigures = Body<'/api/datasets/{id}/runs/{runId}', 'get'>['data'];
export type RunFigures = RunWithFigures['figures'];
export type RunItemFigures = RunWithFigures['items'][number];
export type RunComparison = Body<'/api/datasets/{id}/runs/compare', 'get'>['data'];
export type RunComparisonMetric = RunComparison['metrics'][number];
export type RunComparisonItem = RunComparison['items'][number];
export type ModelConnection = Body<'/api/model-connections/', 'get'>['data'][number];
export type NewModelConnection = NonNullable<paths['/api/model-connections/']['post']['requestBody']>['content']['application/json'];
export type ConnectionTest = Body<'/api/model-connections/{id}/test', 'post'>['data'];
export type Evaluator = Body<'/api/evaluators/', 'get'>['data'][number];
export type NewEvaluator = NonNullable<paths['/api/evaluators/']['post']['requestBody']>['content']['application/json'];
export type EvaluatorJob = Body<'/api/evaluators/{id}/jobs', 'get'>['data'][number];
export type EvaluatorPreview = Body<'/api/evaluators/preview', 'post'>['data'];
export type Monitor = Body<'/api/monitors/', 'get'>['data'][number];
export type NewMonitor = NonNullable<paths['/api/monitors/']['post']['requestBody']>['content']['application/json'];
export type MonitorEpisode = Body<'/api/monitors/{id}/history', 'get'>['data'][number];
export type Retention = Body<'/api/retention', 'get'>['data'];
export type Usage = Body<'/api/usage', 'get'>['data'];
