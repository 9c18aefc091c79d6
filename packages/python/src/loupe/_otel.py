"""
The application's active OpenTelemetry span, when ``opentelemetry-api`` is installed.

Loupe spans started while it is the innermost active span join its trace (its trace id, the
span as parent), so an application that also exports OpenTelemetry to Loupe sees one tree.
Without the package this answers None and nothing else changes.
"""

from __future__ import annotations

from typing import Any

_trace: Any
try:
    from opentelemetry import trace as _trace
except ImportError:  # the optional extra is not installed
    _trace = None

OtelParent = tuple[str, str]


def active_otel_parent() -> OtelParent | None:
    """(trace id, span id) of the active OpenTelemetry span as lowercase hex, or None."""
    if _trace is None:
        return None
    context = _trace.get_current_span().get_span_context()
    if not context.is_valid:
        return None
    return (format(context.trace_id, "032x"), format(context.span_id, "016x"))
