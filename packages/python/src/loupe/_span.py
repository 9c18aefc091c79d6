"""One span: a unit of work, sent once it ends."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypedDict, Union

from ._clock import iso_at, monotonic_ns, new_span_id, now_iso
from ._contract import SpanKind
from ._errors import LoupeError
from ._json_safe import to_json_safe
from ._otel import OtelParent

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from ._scores import ScoreOptions

SpanStatus = Literal["ok", "error", "unset"]


class SpanIO(TypedDict, total=False):
    """A span's input or output as the service stores it (wire names)."""

    messages: list[dict[str, Any]]
    toolCalls: list[dict[str, Any]]
    documents: list[dict[str, Any]]
    text: str
    raw: Any


SpanIOLike = Union[SpanIO, Mapping[str, Any], str]

#: Python keyword of a metric, and its field on the wire.
METRIC_FIELDS: dict[str, str] = {
    "model": "model",
    "provider": "provider",
    "input_tokens": "inputTokens",
    "output_tokens": "outputTokens",
    "total_tokens": "totalTokens",
    "cache_read_tokens": "cacheReadTokens",
    "cache_write_tokens": "cacheWriteTokens",
    "reasoning_tokens": "reasoningTokens",
    "cost_usd": "costUsd",
    "latency_ms": "latencyMs",
    "ttft_ms": "ttftMs",
}


class PromptRef(Protocol):
    """What a span records of a prompt (a ``Prompt`` of ``get_prompt``)."""

    @property
    def name(self) -> str: ...

    @property
    def version(self) -> str: ...

    @property
    def is_fallback(self) -> bool: ...


class TraceInfo:
    """Trace-level fields every span of one trace carries to the transport (shared by its spans)."""

    __slots__ = ("name", "session_id", "tags", "trace_id", "user_id")

    def __init__(
        self,
        trace_id: str,
        name: str | None,
        session_id: str | None = None,
        user_id: str | None = None,
        tags: tuple[str, ...] = (),
    ) -> None:
        self.trace_id = trace_id
        self.name = name
        self.session_id = session_id
        self.user_id = user_id
        self.tags = tags

    def payload_fields(self) -> dict[str, Any]:
        fields: dict[str, Any] = {"traceId": self.trace_id}
        if self.name:
            fields["name"] = self.name
        if self.session_id:
            fields["sessionId"] = self.session_id
        if self.user_id:
            fields["userId"] = self.user_id
        if self.tags:
            fields["tags"] = list(self.tags)
        return fields


def as_io(value: SpanIOLike) -> dict[str, Any]:
    return {"text": value} if isinstance(value, str) else dict(value)


class Span:
    """
    One unit of work. Every setter may be called until ``end()``; ending hands a snapshot to
    the transport, and a second ``end()`` does nothing.
    """

    __slots__ = (
        "_end_ns",
        "_score_sink",
        "_sink",
        "_start_ns",
        "attributes",
        "duration_ms",
        "events",
        "input",
        "kind",
        "metadata",
        "metrics",
        "name",
        "otel_parent",
        "output",
        "parent_span_id",
        "prompt_name",
        "prompt_version",
        "span_id",
        "status",
        "status_message",
        "trace",
    )

    def __init__(
        self,
        name: str,
        *,
        kind: SpanKind = "custom",
        trace: TraceInfo,
        parent_span_id: str | None = None,
        sink: Callable[[Span], None],
        otel_parent: OtelParent | None = None,
        score_sink: Callable[..., str] | None = None,
    ) -> None:
        self._start_ns = monotonic_ns()
        self.span_id = new_span_id()
        self.name = name
        self.kind: SpanKind = kind
        self.parent_span_id = parent_span_id
        self.trace = trace
        self.status: SpanStatus = "unset"
        self.status_message: str | None = None
        self.input: dict[str, Any] | None = None
        self.output: dict[str, Any] | None = None
        self.metrics: dict[str, Any] = {}
        self.attributes: dict[str, Any] = {}
        self.metadata: dict[str, Any] = {}
        self.events: list[dict[str, Any]] = []
        self.prompt_name: str | None = None
        self.prompt_version: str | None = None
        self._end_ns: int | None = None
        self.duration_ms: float | None = None
        #: The OpenTelemetry span that was active when this one started (see _otel.py).
        self.otel_parent = otel_parent
        self._sink = sink
        self._score_sink = score_sink

    @property
    def trace_id(self) -> str:
        return self.trace.trace_id

    @property
    def ended(self) -> bool:
        return self._end_ns is not None

    @property
    def start_time(self) -> str:
        """ISO 8601 with microseconds (written when read: most spans are only read when sent)."""
        return iso_at(self._start_ns)

    @property
    def end_time(self) -> str | None:
        return None if self._end_ns is None else iso_at(self._end_ns)

    def set_input(self, value: SpanIOLike) -> Span:
        self.input = as_io(value)
        return self

    def set_output(self, value: SpanIOLike) -> Span:
        self.output = as_io(value)
        return self

    def set_metrics(
        self,
        *,
        model: str | None = None,
        provider: str | None = None,
        input_tokens: int | None = None,
        output_tokens: int | None = None,
        total_tokens: int | None = None,
        cache_read_tokens: int | None = None,
        cache_write_tokens: int | None = None,
        reasoning_tokens: int | None = None,
        cost_usd: float | None = None,
        latency_ms: float | None = None,
        ttft_ms: float | None = None,
    ) -> Span:
        """Merges metrics; total_tokens is input plus output when not given."""
        given = {
            "model": model,
            "provider": provider,
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "total_tokens": total_tokens,
            "cache_read_tokens": cache_read_tokens,
            "cache_write_tokens": cache_write_tokens,
            "reasoning_tokens": reasoning_tokens,
            "cost_usd": cost_usd,
            "latency_ms": latency_ms,
            "ttft_ms": ttft_ms,
        }
        for key, value in given.items():
            if value is not None:
                self.metrics[key] = value
        if "total_tokens" not in self.metrics and input_tokens is not None and output_tokens is not None:
            self.metrics["total_tokens"] = input_tokens + output_tokens
        return self

    def set_attribute(self, key: str, value: Any) -> Span:
        self.attributes[key] = value
        return self

    def set_attributes(self, attributes: Mapping[str, Any]) -> Span:
        self.attributes.update(attributes)
        return self

    def set_metadata(self, metadata: Mapping[str, Any]) -> Span:
        self.metadata.update(metadata)
        return self

    def set_status(self, status: SpanStatus, status_message: str | None = None) -> Span:
        self.status = status
        self.status_message = status_message
        return self

    def add_event(self, name: str, attributes: Mapping[str, Any] | None = None) -> Span:
        event: dict[str, Any] = {"name": name, "timestamp": now_iso()}
        if attributes:
            event["attributes"] = dict(attributes)
        self.events.append(event)
        return self

    def set_prompt(self, prompt: PromptRef) -> Span:
        """Records the prompt version this span uses; a fallback names the prompt only."""
        self.prompt_name = prompt.name
        self.prompt_version = None if prompt.is_fallback else prompt.version
        return self

    def update_trace(
        self,
        *,
        session_id: str | None = None,
        user_id: str | None = None,
        tags: list[str] | tuple[str, ...] | None = None,
        name: str | None = None,
    ) -> Span:
        """Sets fields of this span's trace, for the spans of it not yet ended (the root ends last)."""
        if session_id is not None:
            self.trace.session_id = session_id
        if user_id is not None:
            self.trace.user_id = user_id
        if tags is not None:
            self.trace.tags = tuple(tags)
        if name is not None:
            self.trace.name = name
        return self

    def score(self, name: str, value: float | str | bool, **options: Unpack[ScoreOptions]) -> str:
        """
        Scores this span (its trace and span ids), before or after it ends; sent with the spans'
        batches. Options as ``Loupe.score``: ``id``, ``data_type``, ``comment``, ``metadata``,
        ``timestamp``, ``environment``, ``eval_trace_id``. Answers the score's id (pass it as
        ``id`` again to correct the score).
        """
        if self._score_sink is None:
            raise LoupeError("config", "this span belongs to no client: it cannot send a score")
        return self._score_sink(name=name, value=value, trace_id=self.trace.trace_id, span_id=self.span_id, **options)

    def end(self, *, status: SpanStatus | None = None, status_message: str | None = None, output: SpanIOLike | None = None) -> None:
        if self._end_ns is not None:
            return
        end_ns = self._end_ns = monotonic_ns()
        self.duration_ms = (end_ns - self._start_ns) / 1e6
        if status is not None:
            self.set_status(status, status_message)
        elif status_message is not None:
            self.status_message = status_message
        if output is not None:
            self.set_output(output)
        self.metrics.setdefault("latency_ms", self.duration_ms)
        self._sink(self)

    def snapshot(self) -> Span:
        """
        A copy the application's later changes do not reach (its own fields and containers; the
        values inside are shared). The transport keeps this at ``end()`` and makes the payload on
        its thread, so the application's thread does not pay for the JSON-safe walk.
        """
        copy = Span.__new__(Span)
        for name in _COPIED:
            setattr(copy, name, getattr(self, name))
        copy.input = None if self.input is None else dict(self.input)
        copy.output = None if self.output is None else dict(self.output)
        copy.metrics = dict(self.metrics)
        copy.attributes = dict(self.attributes)
        copy.metadata = dict(self.metadata)
        copy.events = list(self.events)
        return copy

    def to_payload(self) -> dict[str, Any]:
        """The span as POST /api/traces takes it."""
        payload: dict[str, Any] = {"spanId": self.span_id}
        if self.parent_span_id:
            payload["parentSpanId"] = self.parent_span_id
        payload["name"] = self.name
        payload["kind"] = self.kind
        if self.input is not None:
            payload["input"] = to_json_safe(self.input)
        if self.output is not None:
            payload["output"] = to_json_safe(self.output)
        payload["startTime"] = self.start_time
        payload["endTime"] = self.end_time or self.start_time
        payload["durationMs"] = self.duration_ms or 0
        latency = None
        for key, value in self.metrics.items():
            if key == "latency_ms":
                latency = value
            else:
                payload[METRIC_FIELDS[key]] = value
        payload["status"] = self.status
        if self.status_message is not None:
            payload["statusMessage"] = self.status_message
        if self.attributes:
            payload["attributes"] = to_json_safe(self.attributes)
        if self.events:
            payload["events"] = to_json_safe(self.events)
        # The span shape has no latency field (its duration is durationMs): it travels in metadata.
        metadata = dict(self.metadata)
        if latency is not None:
            metadata["latencyMs"] = latency
        if metadata:
            payload["metadata"] = to_json_safe(metadata)
        if self.prompt_name is not None:
            payload["promptName"] = self.prompt_name
        if self.prompt_version is not None:
            payload["promptVersion"] = self.prompt_version
        return payload


_COPIED = (
    "span_id",
    "trace",
    "parent_span_id",
    "name",
    "kind",
    "status",
    "status_message",
    "prompt_name",
    "prompt_version",
    "_start_ns",
    "_end_ns",
    "duration_ms",
    "otel_parent",
    "_sink",
    "_score_sink",
)


def error_message(error: BaseException | object) -> str:
    """The message of anything raised."""
    if isinstance(error, BaseException):
        return str(error) or type(error).__name__
    return error if isinstance(error, str) else repr(error)
