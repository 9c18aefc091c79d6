"""Scores from the SDK (``Loupe.score``, ``Span.score``, ``loupe.score``) as the service stores them."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from typing import Any

import loupe
from conftest import Recorded, Service
from flaky_proxy import flaky_proxy

MakeClient = Callable[..., tuple[loupe.Loupe, Recorded]]


def scores(service: Service, query: str) -> list[dict[str, Any]]:
    status, body = service.call("GET", f"/api/scores?{query}")
    assert status == 200, body
    data: list[dict[str, Any]] = body["data"]
    return data


def test_span_and_client_scores_land_on_the_span_the_trace_and_the_session(make_client: MakeClient, service: Service) -> None:
    client, recorded = make_client(environment="staging")
    with client.span("agent", kind="agent", session_id="py-score-session") as root, client.span("chat", kind="llm.chat") as chat:
        chat_score = chat.score("helpfulness", 0.75, comment="mostly right", metadata={"judge": "gpt"})
    correct = client.score(trace_id=root.trace_id, name="correct", value=True)
    client.score(session_id="py-score-session", name="tone", value="friendly")
    assert client.flush()
    assert recorded.errors == []
    assert client.stats().scores == loupe.ScoreStats(queued=0, sent=3, rejected=0, dropped=0)
    # One request for the spans, one for the three scores: batched, not one a score.
    assert client.stats().requests == 2

    trace = service.trace(root.trace_id, 2)
    assert [(s["id"], s["name"], s["dataType"], s["value"], s["source"]) for s in trace["scores"]] == [
        (correct, "correct", "boolean", 1, "sdk")
    ]
    (chat_span,) = [s for s in trace["spans"] if s["name"] == "chat"]
    (stored,) = chat_span["scores"]
    assert (stored["id"], stored["value"], stored["comment"], stored["spanId"], stored["traceId"]) == (
        chat_score,
        0.75,
        "mostly right",
        chat.span_id,
        root.trace_id,
    )
    (listed,) = scores(service, f"spanId={chat.span_id}")
    assert (listed["environment"], listed["metadata"], listed["source"]) == ("staging", {"judge": "gpt"}, "sdk")
    (tone,) = scores(service, "sessionId=py-score-session&name=tone")
    assert (tone["dataType"], tone["stringValue"]) == ("categorical", "friendly")


def test_a_refused_score_goes_to_on_error_and_the_rest_of_its_batch_is_stored(make_client: MakeClient, service: Service) -> None:
    status, _ = service.call("POST", "/api/score-configs", {"name": "py-stars", "dataType": "numeric", "min": 1, "max": 5})
    assert status == 201
    client, recorded = make_client()
    good = client.score(trace_id="py-refused", name="py-stars", value=4)
    client.score(trace_id="py-refused", name="py-stars", value=9)
    client.flush()
    assert client.stats().scores.sent == 1 and client.stats().scores.rejected == 1
    assert [e.kind for e in recorded.errors] == ["rejected"]
    assert "scores.1.value" in str(recorded.errors[0])
    assert [s["id"] for s in scores(service, "traceId=py-refused")] == [good]


def test_a_backlog_of_scores_goes_in_requests_of_up_to_a_thousand(make_client: MakeClient, service: Service) -> None:
    client, recorded = make_client(batch_size=5000, flush_interval_ms=600_000)
    for i in range(2500):
        client.score(trace_id="py-backlog", name="quality", value=i)
    client.flush()
    assert client.stats().requests == 3
    assert client.stats().scores.sent == 2500 and recorded.errors == []
    assert len(scores(service, "traceId=py-backlog&limit=1000")) == 1000


def test_a_failing_score_request_is_retried_with_the_same_ids_and_stored_once(make_client: MakeClient, service: Service) -> None:
    with flaky_proxy(service.base_url, failures=2) as proxy:
        client, recorded = make_client(base_url=proxy.url, retry_base_delay_ms=50)
        score_id = client.score(trace_id="py-retried", name="quality", value=3)
        client.flush()
        attempts = [code for _, _, path, code in proxy.seen if path == "/api/scores"]
    assert attempts == [503, 503, 200]
    assert recorded.errors == []
    assert client.stats().scores.sent == 1
    # Corrected later with the same id: still one score.
    client2, _ = make_client()
    client2.score(id=score_id, trace_id="py-retried", name="quality", value=4)
    client2.flush()
    assert [(s["id"], s["value"]) for s in scores(service, "traceId=py-retried")] == [(score_id, 4)]


def test_scores_are_dropped_and_reported_after_three_retries(make_client: MakeClient, service: Service) -> None:
    with flaky_proxy(service.base_url, failures=10) as proxy:
        client, recorded = make_client(base_url=proxy.url, retry_base_delay_ms=20)
        client.score(trace_id="py-lost", name="quality", value=1)
        client.flush()
        attempts = [p for p in proxy.seen if p[2] == "/api/scores"]
    assert len(attempts) == 4
    assert [e.kind for e in recorded.errors] == ["dropped"]
    assert recorded.errors[0].details["score_count"] == 1 and recorded.errors[0].details["status"] == 503
    assert client.stats().scores.dropped == 1


def test_a_program_that_exits_sends_its_scores(service: Service) -> None:
    """No flush, no shutdown, a timer of ten minutes: the exit hook sends the scores of the default client."""
    script = textwrap.dedent(
        """
        import loupe

        with loupe.span("graded", kind="chain") as s:
            s.score("relevance", 0.5)
        print(s.trace_id, flush=True)
        print(loupe.score(trace_id=s.trace_id, name="verdict", value="pass"), flush=True)
        """
    )
    env = {
        **os.environ,
        "LOUPE_API_KEY": service.api_key,
        "LOUPE_BASE_URL": service.base_url,
        "LOUPE_FLUSH_INTERVAL_MS": "600000",
    }
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60, check=True)
    trace_id, verdict_id = done.stdout.split()
    deadline = time.monotonic() + 10
    while len(found := scores(service, f"traceId={trace_id}")) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert sorted((s["name"], s["source"]) for s in found) == [("relevance", "sdk"), ("verdict", "sdk")]
    assert verdict_id in {s["id"] for s in found}
