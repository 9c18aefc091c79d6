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

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ._client import NEW_TRACE, Loupe, ObserveArgs, Observer, SpanArgs, SpanScope
from ._context import TraceAttributes
from ._contract import SPAN_KINDS, RenderedTemplate, SpanKind, render_template, template_text, template_variables
from ._default import configure, get_client
from ._errors import LoupeError, LoupeErrorKind
from ._experiment import Evaluator, ExperimentArgs, ExperimentFailure, ExperimentItem, ExperimentSummary, ScoreFigure, Task
from ._options import OptionArgs
from ._prompts import Fallback, Prompt, PromptArgs, PromptClient, RenderedPrompt, render
from ._scores import ScoreArgs, ScoreDataType, ScoreOptions
from ._span import PromptRef, Span, SpanIO, SpanIOLike, SpanStatus, TraceInfo
from ._transport import ScoreStats, TransportStats

if TYPE_CHECKING:
    from typing_extensions import Unpack

__version__ = "0.1.0"


#: ``@loupe.observe`` / ``@loupe.observe(kind="tool")`` on the default client (found at each call).
observe = Observer(get_client)


def span(name: str, **options: Unpack[SpanArgs]) -> SpanScope:
    """``Loupe.span`` on the default client: ``with loupe.span("search", kind="retrieval") as s:``."""
    return get_client().span(name, **options)


def start_span(name: str, **options: Unpack[SpanArgs]) -> Span:
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


def get_prompt(name: str, **options: Unpack[PromptArgs]) -> Prompt:
    """``Loupe.get_prompt`` on the default client."""
    return get_client().get_prompt(name, **options)


async def aget_prompt(name: str, **options: Unpack[PromptArgs]) -> Prompt:
    """``Loupe.aget_prompt`` on the default client."""
    return await get_client().aget_prompt(name, **options)


def score(**score: Unpack[ScoreArgs]) -> str:
    """``Loupe.score`` on the default client: a score on a trace, a span or a session."""
    return get_client().score(**score)


def experiment(**experiment: Unpack[ExperimentArgs]) -> ExperimentSummary:
    """``Loupe.experiment`` on the default client: runs ``task`` over a dataset's items as a run of it."""
    return get_client().experiment(**experiment)


async def aexperiment(**experiment: Unpack[ExperimentArgs]) -> ExperimentSummary:
    """``Loupe.aexperiment`` on the default client."""
    return await get_client().aexperiment(**experiment)


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
    "ExperimentArgs",
    "ExperimentFailure",
    "ExperimentItem",
    "ExperimentSummary",
    "Fallback",
    "Loupe",
    "LoupeError",
    "LoupeErrorKind",
    "ObserveArgs",
    "Observer",
    "OptionArgs",
    "Prompt",
    "PromptArgs",
    "PromptClient",
    "PromptRef",
    "RenderedPrompt",
    "RenderedTemplate",
    "ScoreArgs",
    "ScoreDataType",
    "ScoreFigure",
    "ScoreOptions",
    "ScoreStats",
    "Span",
    "SpanArgs",
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
