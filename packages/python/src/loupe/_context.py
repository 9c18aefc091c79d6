"""
What travels with the execution context (``contextvars``): threads started with a copied
context, asyncio tasks and awaits all keep it.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._span import Span


@dataclass(frozen=True)
class TraceAttributes:
    """Trace fields given by ``Loupe.trace_attributes``: applied to every trace a span starts in them."""

    session_id: str | None = None
    user_id: str | None = None
    tags: tuple[str, ...] = ()
    trace_name: str | None = None


active_span: ContextVar[Span | None] = ContextVar("loupe_active_span", default=None)
trace_attributes: ContextVar[TraceAttributes | None] = ContextVar("loupe_trace_attributes", default=None)
