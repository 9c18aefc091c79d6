"""
Loupe's Python client: spans and traces batched to a Loupe service in the background, prompts
fetched, cached and rendered by the service's template rules.

    import loupe

    loupe.configure(api_key="lpk_…", base_url="http://127.0.0.1:3000")

    @loupe.observe(kind="agent")
    def answer(question: str) -> str:
        with loupe.span("chat", kind="llm.chat") as span:
            span.set_metrics(model="gpt-4o", input_tokens=812, output_tokens=64)
            return "It is covered."
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar, overload

from ._client import NEW_TRACE, Loupe, SpanScope, trace_function
from ._context import TraceAttributes
from ._contract import SPAN_KINDS, RenderedTemplate, SpanKind, render_template, template_text, template_variables
from ._default import configure, get_client
from ._errors import LoupeError, LoupeErrorKind
from ._experiment import Evaluator, ExperimentFailure, ExperimentItem, ExperimentSummary, ScoreFigure, Task
from ._prompts import Fallback, Prompt, PromptClient, RenderedPrompt, render
from ._scores import ScoreDataType
from ._span import PromptRef, Span, SpanIO, SpanIOLike, SpanStatus, TraceInfo
from ._transport import ScoreStats, TransportStats

__version__ = "0.1.0"

F = TypeVar("F", bound=Callable[..., Any])


@overload
def observe(func: F, /) -> F: ...


@overload
def observe(
    func: None = None,
    /,
    *,
    name: str | None = None,
    kind: SpanKind = "custom",
    capture_input: bool = True,
    capture_output: bool = True,
    attributes: Mapping[str, Any] | None = None,
) -> Callable[[F], F]: ...


def observe(
    func: F | None = None,
    /,
    *,
    name: str | None = None,
    kind: SpanKind = "custom",
    capture_input: bool = True,
    capture_output: bool = True,
    attributes: Mapping[str, Any] | None = None,
) -> F | Callable[[F], F]:
    """``Loupe.observe`` on the default client (found at each call)."""
    if kind not in SPAN_KINDS:
        raise LoupeError("config", f"kind must be one of {', '.join(SPAN_KINDS)}, got {kind!r}")

    def decorate(fn: F) -> F:
        return trace_function(get_client, fn, name, kind, capture_input, capture_output, attributes)

    return decorate(func) if func is not None else decorate


def span(name: str, **options: Any) -> SpanScope:
    """``Loupe.span`` on the default client: ``with loupe.span("search", kind="retrieval") as s:``."""
    return get_client().span(name, **options)


def start_span(name: str, **options: Any) -> Span:
    """``Loupe.start_span`` on the default client."""
    return get_client().start_span(name, **options)


def current_span() -> Span | None:
    """The span active in this context, if any."""
    return get_client().current_span()


@contextmanager
def trace_attributes(
    *,
    session_id: str | None = None,
    user_id: str | None = None,
    tags: list[str] | tuple[str, ...] | None = None,
    trace_name: str | None = None,
) -> Iterator[None]:
    """Session, user and tags of the traces whose spans start in the block (``Loupe.trace_attributes``)."""
    with get_client().trace_attributes(session_id=session_id, user_id=user_id, tags=tags, trace_name=trace_name):
        yield


def get_prompt(name: str, **options: Any) -> Prompt:
    """``Loupe.get_prompt`` on the default client."""
    return get_client().get_prompt(name, **options)


async def aget_prompt(name: str, **options: Any) -> Prompt:
    """``Loupe.aget_prompt`` on the default client."""
    return await get_client().aget_prompt(name, **options)


def score(*, name: str, value: float | str | bool, **options: Any) -> str:
    """``Loupe.score`` on the default client: a score on a trace, a span or a session."""
    return get_client().score(name=name, value=value, **options)


def experiment(*, dataset: str, name: str, task: Task, **options: Any) -> ExperimentSummary:
    """``Loupe.experiment`` on the default client: runs ``task`` over a dataset's items as a run of it."""
    return get_client().experiment(dataset=dataset, name=name, task=task, **options)


async def aexperiment(*, dataset: str, name: str, task: Task, **options: Any) -> ExperimentSummary:
    """``Loupe.aexperiment`` on the default client."""
    return await get_client().aexperiment(dataset=dataset, name=name, task=task, **options)


def flush(timeout: float | None = None) -> bool:
    """Sends what the default client holds and waits for it."""
    return get_client().flush(timeout)


def shutdown(timeout: float | None = None) -> None:
    """Flushes the default client and stops its thread (also done at interpreter exit)."""
    get_client().shutdown(timeout)


__all__ = [
    "NEW_TRACE",
    "SPAN_KINDS",
    "Evaluator",
    "ExperimentFailure",
    "ExperimentItem",
    "ExperimentSummary",
    "Fallback",
    "Loupe",
    "LoupeError",
    "LoupeErrorKind",
    "Prompt",
    "PromptClient",
    "PromptRef",
    "RenderedPrompt",
    "RenderedTemplate",
    "ScoreDataType",
    "ScoreFigure",
    "ScoreStats",
    "Span",
    "SpanIO",
    "SpanIOLike",
    "SpanKind",
    "SpanScope",
    "SpanStatus",
    "Task",
    "TraceAttributes",
    "TraceInfo",
    "TransportStats",
    "__version__",
    "aexperiment",
    "aget_prompt",
    "configure",
    "current_span",
    "experiment",
    "flush",
    "get_client",
    "get_prompt",
    "observe",
    "render",
    "render_template",
    "score",
    "shutdown",
    "span",
    "start_span",
    "template_text",
    "template_variables",
    "trace_attributes",
]
