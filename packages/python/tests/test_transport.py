"""Batching, the flush timer, flush at exit, retries with backoff: against the service (and a failing proxy in front of it)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from typing import Any, cast

import pytest

import loupe
from conftest import Recorded, Service
from flaky_proxy import flaky_proxy

MakeClient = Callable[..., tuple[loupe.Loupe, Recorded]]


def wait_for(condition: Callable[[], bool], timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def posts(client: loupe.Loupe) -> int:
    """Requests the transport made (spans only in these tests)."""
    return client.stats().requests


def test_ten_ended_spans_are_sent_in_one_request_without_a_flush(make_client: MakeClient, service: Service) -> None:
    client, recorded = make_client(flush_interval_ms=600_000)
    with client.span("batch-root", kind="chain") as root:
        for i in range(9):
            client.start_span(f"step {i}", kind="tool").end()
        time.sleep(0.3)
        assert posts(client) == 0, "nine spans wait for the tenth"
    assert wait_for(lambda: posts(client) == 1), recorded.requests
    stored = service.trace(root.trace_id, 10)
    assert {s["name"] for s in stored["spans"]} == {"batch-root", *(f"step {i}" for i in range(9))}
    assert client.stats().sent == 10
    assert stored["source"] == "sdk"


def test_a_batch_holds_at_most_ten_spans(make_client: MakeClient, service: Service) -> None:
    client, _ = make_client(flush_interval_ms=600_000)
    with client.span("wide", kind="chain") as root:
        for i in range(24):
            client.start_span(f"leaf {i}").end()
    client.flush()
    assert posts(client) == 3  # 10 + 10 + 5
    assert len(service.trace(root.trace_id, 25)["spans"]) == 25


def test_the_timer_sends_what_waits(make_client: MakeClient, service: Service) -> None:
    client, _ = make_client(flush_interval_ms=300)
    span = client.start_span("lonely")
    span.end()
    assert wait_for(lambda: posts(client) == 1, timeout=5)
    assert service.trace(span.trace_id, 1)["spans"][0]["name"] == "lonely"


def test_a_program_that_exits_sends_its_spans(service: Service) -> None:
    """No flush, no shutdown, a timer of ten minutes: the exit hook sends the spans."""
    script = textwrap.dedent(
        """
        import loupe

        @loupe.observe(kind="agent")
        def agent(question):
            with loupe.span("search", kind="retrieval"):
                pass
            return "answer to " + question

        agent("why")
        print(loupe.get_client().current_span() is None, flush=True)
        with loupe.span("second", kind="chain") as s:
            print(s.trace_id, flush=True)
        """
    )
    env = {
        **os.environ,
        "LOUPE_API_KEY": service.api_key,
        "LOUPE_BASE_URL": service.base_url,
        "LOUPE_FLUSH_INTERVAL_MS": "600000",
    }
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60, check=True)
    lines = done.stdout.split()
    assert lines[0] == "True"
    stored = service.trace(lines[1], 1)
    assert stored["spans"][0]["name"] == "second"
    status, listed = service.call("GET", "/api/traces?name=agent&limit=5")
    assert status == 200
    assert any(t["name"] == "agent" and t["spanCount"] == 2 for t in listed["data"]), listed


def test_a_failing_request_is_retried_with_doubling_delays_then_passes(make_client: MakeClient, service: Service) -> None:
    with flaky_proxy(service.base_url, failures=2) as proxy:
        client, recorded = make_client(base_url=proxy.url, retry_base_delay_ms=100)
        span = client.start_span("retried", kind="tool")
        span.end()
        client.flush()
        attempts = [(t, code) for t, method, path, code in proxy.seen if path == "/api/traces"]
    assert [code for _, code in attempts] == [503, 503, 200]
    gaps = [b[0] - a[0] for a, b in zip(attempts, attempts[1:])]
    assert gaps[0] >= 0.1 and gaps[1] >= 0.2, gaps
    assert recorded.errors == []
    assert client.stats().sent == 1 and client.stats().requests == 3
    assert service.trace(span.trace_id, 1)["spans"][0]["name"] == "retried"


def test_spans_are_dropped_and_reported_after_three_retries(make_client: MakeClient, service: Service) -> None:
    with flaky_proxy(service.base_url, failures=10) as proxy:
        client, recorded = make_client(base_url=proxy.url, retry_base_delay_ms=20)
        client.start_span("lost").end()
        client.flush()
        attempts = [p for p in proxy.seen if p[2] == "/api/traces"]
    assert len(attempts) == 4  # the first try and three retries
    assert [e.kind for e in recorded.errors] == ["dropped"]
    assert recorded.errors[0].details["span_count"] == 1 and recorded.errors[0].details["status"] == 503
    assert client.stats().dropped == 1


def test_a_refused_batch_is_not_retried(make_client: MakeClient, service: Service) -> None:
    with flaky_proxy(service.base_url, failures=1, status=400) as proxy:
        client, recorded = make_client(base_url=proxy.url, retry_base_delay_ms=20)
        client.start_span("refused").end()
        client.flush()
        attempts = [p for p in proxy.seen if p[2] == "/api/traces"]
    assert len(attempts) == 1
    assert [e.kind for e in recorded.errors] == ["rejected"]


def test_a_kept_alive_connection_the_server_closed_is_opened_again_at_once(make_client: MakeClient, service: Service) -> None:
    """Each answer's connection is closed by the proxy without saying so: the next request finds it dead."""
    with flaky_proxy(service.base_url, close_silently=True) as proxy:
        # A backoff retry would wait a minute: the flushes below would time out.
        client, recorded = make_client(base_url=proxy.url, retry_base_delay_ms=60_000)
        spans = [client.start_span(name) for name in ("first", "second", "third")]
        for span in spans:
            span.end()
            assert client.flush(timeout=10)
    assert recorded.errors == []
    assert client.stats().sent == 3
    assert [(path, code) for _, _, path, code in proxy.seen] == [("/api/traces", 200)] * 3
    assert len(set(proxy.ports)) == 3  # a new connection each time
    for span in spans:
        assert service.trace(span.trace_id, 1)["spans"][0]["name"] == span.name


def test_spans_go_through_the_proxy_of_http_proxy(make_client: MakeClient, service: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    with flaky_proxy(service.base_url) as proxy, monkeypatch.context() as env:
        for name in ("NO_PROXY", "no_proxy", "http_proxy"):
            env.delenv(name, raising=False)
        env.setenv("HTTP_PROXY", proxy.url)
        client, recorded = make_client()
        span = client.start_span("proxied")
        span.end()
        assert client.flush(timeout=10)
        # A forward proxy gets the absolute URL.
        assert [(method, path) for _, method, path, _ in proxy.seen] == [("POST", f"{service.base_url}/api/traces")]
    assert recorded.errors == []
    assert service.trace(span.trace_id, 1)["spans"][0]["name"] == "proxied"


def test_an_unreachable_service_never_raises_into_the_application(make_client: MakeClient) -> None:
    from conftest import free_port

    client, recorded = make_client(base_url=f"http://127.0.0.1:{free_port()}", retry_base_delay_ms=10, max_retries=1)
    with client.span("offline"):
        pass
    assert client.flush(timeout=30)
    assert [e.kind for e in recorded.errors] == ["dropped"]
    assert "got no answer" in recorded.errors[0].message


def test_without_a_key_nothing_is_sent_and_spans_still_work() -> None:
    client = loupe.Loupe(env={})
    with client.span("quiet") as span:
        span.set_output("fine")
    assert span.ended and span.status == "ok"
    assert client.stats().requests == 0


def test_options_come_from_arguments_then_variables() -> None:
    env = {"LOUPE_API_KEY": "k" * 24, "LOUPE_BATCH_SIZE": "3", "LOUPE_SOURCE": "tests", "LOUPE_BASE_URL": "http://x.test:1/"}
    options = loupe.Loupe(env=env, batch_size=5).options
    assert (options.batch_size, options.source, options.base_url, options.enabled) == (5, "tests", "http://x.test:1", True)
    assert (options.flush_interval_ms, options.max_retries, options.retry_base_delay_ms, options.prompt_cache_ttl_ms) == (
        5000,
        3,
        1000,
        60_000,
    )
    bad: dict[str, Any] = {"LOUPE_BATCH_SIZE": "ten"}
    try:
        loupe.Loupe(env=bad)
    except loupe.LoupeError as error:
        assert error.kind == "config" and "batch_size" in error.message
    else:
        raise AssertionError("a bad LOUPE_BATCH_SIZE must raise")


def test_a_misspelt_option_is_refused_as_a_wrong_keyword_argument() -> None:
    options: dict[str, Any] = {"env": {}, "api_kye": "lpk_x"}
    with pytest.raises(TypeError, match=r"Loupe\(\) got unexpected keyword argument\(s\): api_kye"):
        loupe.Loupe(**options)
    client = loupe.Loupe(env={})
    for call, name in (
        (lambda o: client.span("s", **o), "span"),
        (lambda o: client.start_span("s", **o), "start_span"),
        (lambda o: client.observe(**o), "observe"),
        (lambda o: client.get_prompt("p", **o), "get_prompt"),
        (lambda o: client.score(name="n", value=1, **o), "score"),
    ):
        with pytest.raises(TypeError, match=rf"{name}\(\) got unexpected keyword argument\(s\): knd"):
            call({"knd": "tool"})
    with pytest.raises(TypeError, match=r"score\(\) is missing keyword argument\(s\): value"):
        client.score(**cast(Any, {"name": "n", "trace_id": "t"}))
