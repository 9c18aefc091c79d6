"""Loupe spans made inside an active OpenTelemetry span land in its trace, under it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Callable

from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

import loupe
from conftest import Recorded, Service

MakeClient = Callable[..., tuple[loupe.Loupe, Recorded]]

TRACE_ID = int("4bf92f3577b34da6a3ce929d0e0e4736", 16)


def otel_span(span_id: int, trace_id: int = TRACE_ID) -> NonRecordingSpan:
    """opentelemetry-api alone has no SDK: an application's active span as a propagated context gives it."""
    return NonRecordingSpan(SpanContext(trace_id=trace_id, span_id=span_id, is_remote=False, trace_flags=TraceFlags(TraceFlags.SAMPLED)))


def test_spans_join_the_active_opentelemetry_trace(make_client: MakeClient, service: Service) -> None:
    client, _ = make_client()
    with trace.use_span(otel_span(0x00F067AA0BA902B7)), client.span("loupe outer", kind="agent") as outer:  # noqa: SIM117 - a tree
        with client.span("loupe inner", kind="tool") as inner:
            pass
    assert outer.trace_id == inner.trace_id == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert outer.parent_span_id == "00f067aa0ba902b7"
    client.flush()
    spans = {s["name"]: s for s in service.trace("4bf92f3577b34da6a3ce929d0e0e4736", 2)["spans"]}
    assert spans["loupe outer"]["parentSpanId"] == "00f067aa0ba902b7"
    assert spans["loupe inner"]["parentSpanId"] == outer.span_id


def test_an_opentelemetry_span_started_inside_a_loupe_span_is_the_parent(make_client: MakeClient) -> None:
    client, _ = make_client()
    with trace.use_span(otel_span(0x1111)), client.span("loupe a") as a:
        with client.span("loupe b") as b:
            pass
        with trace.use_span(otel_span(0x2222)), client.span("loupe c") as c, client.span("loupe d") as d:
            pass
    assert b.parent_span_id == a.span_id
    assert c.parent_span_id == "0000000000002222" and c.trace_id == a.trace_id
    assert d.parent_span_id == c.span_id


def test_another_trace_id_is_followed_and_new_trace_leaves_it(make_client: MakeClient) -> None:
    client, _ = make_client()
    with trace.use_span(otel_span(0x3333, trace_id=0xABC)):
        joined = client.start_span("joined")
        fresh = client.start_span("fresh", parent=loupe.NEW_TRACE)
    assert joined.trace_id == format(0xABC, "032x") and joined.parent_span_id == "0000000000003333"
    assert fresh.trace_id != joined.trace_id and fresh.parent_span_id is None
    # No valid span active: a trace of its own.
    alone = client.start_span("alone")
    assert alone.parent_span_id is None and len(alone.trace_id) == 32 and alone.trace_id != joined.trace_id


def test_without_opentelemetry_installed_nothing_breaks(service: Service) -> None:
    script = textwrap.dedent(
        """
        import sys
        sys.modules["opentelemetry"] = None  # as if the package were not installed
        import loupe
        with loupe.span("no otel", kind="chain") as span:
            pass
        print(span.trace_id, span.parent_span_id)
        """
    )
    env = {**os.environ, "LOUPE_API_KEY": service.api_key, "LOUPE_BASE_URL": service.base_url}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60, check=True)
    trace_id, parent = done.stdout.split()
    assert parent == "None"
    assert service.trace(trace_id, 1)["spans"][0]["name"] == "no otel"
