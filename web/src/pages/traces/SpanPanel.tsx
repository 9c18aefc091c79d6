import type { ReactNode } from 'react';
import { useQuery } from '@tanstack/react-query';
import { api, call } from '../../api/client';
import type { ChatMessage, Span, SpanIO, SpanNode, ToolCall } from '../../api/types';
import { KindIcon, StatusBadge } from '../../components/Kind';
import { Json } from '../../components/Json';
import { ErrorState, Loading } from '../../components/states';
import { formatDuration } from '../../lib/timeline';
import { formatInt, formatTime, formatUsd } from '../../lib/format';
import { itemPath } from '../../lib/paths';
import { Clamped, ClippedLink } from '../../components/Clipped';
import { ScoreList } from '../quality/Scores';
import { AddToDataset } from '../datasets/AddToDataset';

function Section({ title, children }: { title: string; children: ReactNode }) {
  return (
    <section className="panel-section">
      <h3>{title}</h3>
      {children}
    </section>
  );
}

function Message({ message }: { message: ChatMessage }) {
  return (
    <div className={`message role-${message.role}`} data-role={message.role}>
      <div className="message-head">
        <span className="role">{message.role}</span>
        {message.name && <span className="muted small">{message.name}</span>}
        {message.toolCallId && (
          <span className="muted small">
            result of <code>{message.toolCallId}</code>
          </span>
        )}
      </div>
      <div className="message-body">{message.content}</div>
    </div>
  );
}

function ToolCallView({ call }: { call: ToolCall }) {
  return (
    <div className="message role-toolcall" data-role="tool-call">
      <div className="message-head">
        <span className="role">tool call</span>
        <code>{call.name}</code>
        <span className="muted small">{call.id}</span>
      </div>
      <Json value={call.arguments} label={`Arguments of ${call.name}`} />
      {call.result !== undefined && (
        <>
          <div className="muted small">result</div>
          <Json value={call.result} label={`Result of ${call.name}`} />
        </>
      )}
    </div>
  );
}

/** One side of a span (input or output): conversation, tool calls, documents, text, raw. */
function IOView({ io, label }: { io: SpanIO | undefined; label: string }) {
  if (!io || Object.keys(io).length === 0) return null;
  return (
    <Section title={label}>
      {io.messages && io.messages.length > 0 && (
        <div className="conversation" aria-label={`${label} messages`}>
          {io.messages.map((m, i) => (
            <Message key={i} message={m} />
          ))}
        </div>
      )}
      {io.toolCalls && io.toolCalls.length > 0 && (
        <div className="conversation" aria-label={`${label} tool calls`}>
          {io.toolCalls.map((c) => (
            <ToolCallView key={c.id} call={c} />
          ))}
        </div>
      )}
      {io.documents && io.documents.length > 0 && (
        <ol className="documents">
          {io.documents.map((d, i) => (
            <li key={i} className="document">
              <div className="message-head">
                <span className="role">document {i + 1}</span>
                {d.score !== undefined && <span className="badge">score {d.score.toFixed(3)}</span>}
              </div>
              <div className="message-body">{d.content}</div>
              {d.metadata && Object.keys(d.metadata).length > 0 && <Json value={d.metadata} label={`Metadata of document ${i + 1}`} />}
            </li>
          ))}
        </ol>
      )}
      {io.text !== undefined && <pre className="text-block">{io.text}</pre>}
      {io.raw !== undefined && <Json value={io.raw} label={`${label} raw value`} />}
    </Section>
  );
}

function Metric({ label, value }: { label: string; value: ReactNode }) {
  return (
    <div className="metric">
      <dt>{label}</dt>
      <dd>{value}</dd>
    </div>
  );
}

const number = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/**
 * The selected span: its header and metrics at once from the tree's node, then its input,
 * output, attributes, metadata and events from its own request (cached per span, so going back
 * to a span shows it at once). `aria-busy` until the whole span is there.
 */
export function SpanPanel({ traceId, node }: { traceId: string; node: SpanNode }) {
  const detail = useQuery({
    queryKey: ['trace', traceId, 'span', node.spanId],
    queryFn: ({ signal }) =>
      call(api.GET('/api/traces/{id}/spans/{spanId}', { params: { path: { id: traceId, spanId: node.spanId } }, signal })),
    select: (body) => body.data,
  });
  const span: SpanNode & Partial<Span> = detail.data ?? node;
  const ttft = number(span.ttftMs) ?? number(span.metadata?.ttftMs);
  const latency = number(span.metadata?.latencyMs) ?? span.durationMs;
  return (
    <article className="span-panel" aria-label={`Span ${span.name}`} aria-busy={detail.isPending}>
      <header className="panel-head">
        <div className="panel-title">
          <KindIcon kind={span.kind} />
          <h2>
            <Clamped text={span.name} />
          </h2>
          <StatusBadge status={span.status} />
        </div>
        <div className="muted small">
          {span.kind} · <code>{span.spanId}</code> · {formatTime(span.startTime)}
        </div>
        {span.statusMessage && <div className="alert alert-error">{span.statusMessage}</div>}
      </header>
      <dl className="metrics">
        <Metric label="Duration" value={formatDuration(span.durationMs)} />
        <Metric label="Latency" value={formatDuration(latency)} />
        <Metric label="TTFT" value={ttft !== undefined ? formatDuration(ttft) : '—'} />
        <Metric label="Model" value={span.model ?? '—'} />
        <Metric label="Provider" value={span.provider ?? '—'} />
        <Metric label="Input tokens" value={formatInt(span.inputTokens)} />
        <Metric label="Output tokens" value={formatInt(span.outputTokens)} />
        <Metric label="Total tokens" value={formatInt(span.totalTokens)} />
        <Metric
          label="Cost"
          value={
            <>
              {formatUsd(span.costUsd)}
              {span.costSource && <span className="muted small"> ({span.costSource})</span>}
            </>
          }
        />
        {span.pricing && (
          <Metric
            label="Price per 1M tokens"
            value={
              <span title={`${span.pricing.source} prices${'version' in span.pricing ? ` ${span.pricing.version}` : ''}`}>
                in {formatUsd(span.pricing.inputPerMillion)} · out {formatUsd(span.pricing.outputPerMillion)}
              </span>
            }
          />
        )}
        {span.reasoningTokens !== undefined && <Metric label="Reasoning tokens" value={formatInt(span.reasoningTokens)} />}
        {span.cacheReadTokens !== undefined && <Metric label="Cache read tokens" value={formatInt(span.cacheReadTokens)} />}
        {span.cacheWriteTokens !== undefined && <Metric label="Cache write tokens" value={formatInt(span.cacheWriteTokens)} />}
        {span.promptName && (
          <Metric
            label="Prompt"
            value={
              <ClippedLink
                to={itemPath('prompts', span.promptName)}
                text={`${span.promptName}${span.promptVersion ? ` v${span.promptVersion}` : ''}`}
              />
            }
          />
        )}
      </dl>
      {node.scores && node.scores.length > 0 && (
        <Section title="Scores">
          <ScoreList scores={node.scores} label={`Scores of span ${span.name}`} traceId={traceId} />
        </Section>
      )}
      <Section title="Dataset">
        <AddToDataset traceId={traceId} spanId={node.spanId} />
      </Section>
      {detail.isPending ? (
        <Loading label="Loading input and output…" />
      ) : detail.isError ? (
        <ErrorState error={detail.error} retry={() => detail.refetch()} />
      ) : (
        <SpanContent span={detail.data} />
      )}
    </article>
  );
}

/** What only the whole span has: its payloads and free-form JSON. */
function SpanContent({ span }: { span: Span }) {
  return (
    <>
      <IOView io={span.input} label="Input" />
      <IOView io={span.output} label="Output" />
      {span.attributes && Object.keys(span.attributes).length > 0 && (
        <Section title="Attributes">
          <Json value={span.attributes} label="Attributes" />
        </Section>
      )}
      {span.metadata && Object.keys(span.metadata).length > 0 && (
        <Section title="Metadata">
          <Json value={span.metadata} label="Metadata" />
        </Section>
      )}
      {span.events && span.events.length > 0 && (
        <Section title={`Events (${span.events.length})`}>
          <ol className="events">
            {span.events.map((e, i) => (
              <li key={i}>
                <strong>{e.name}</strong> <span className="muted small">{formatTime(e.timestamp)}</span>
                {e.attributes && Object.keys(e.attributes).length > 0 && (
                  <Json value={e.attributes} label={`Attributes of event ${e.name}`} />
                )}
              </li>
            ))}
          </ol>
        </Section>
      )}
    </>
  );
}
