"""Spans through decorators and context managers, in sync and async code, as the service stores them."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextvars import copy_context
from typing import Any

import pytest

import loupe
from conftest import Recorded, Service

MakeClient = Callable[..., tuple[loupe.Loupe, Recorded]]


def by_name(trace: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["name"]: s for s in trace["spans"]}


def test_decorated_functions_nest_record_arguments_and_results(make_client: MakeClient, service: Service) -> None:
    client, recorded = make_client()

    @client.observe(kind="retrieval")
    def search(query: str, limit: int = 3) -> list[str]:
        return [f"{query} {i}" for i in range(limit)]

    @client.observe(name="chat", kind="llm.chat")
    def call_model(prompt: str) -> str:
        span = client.current_span()
        assert span is not None
        span.set_metrics(model="gpt-4o", provider="openai", input_tokens=812, output_tokens=64, ttft_ms=120)
        return "It is covered."

    class Agent:
        @client.observe(kind="agent")
        def answer(self, question: str) -> dict[str, Any]:
            docs = search(question, limit=2)
            return {"answer": call_model(question + " ".join(docs)), "trace": client.current_span().trace_id}  # type: ignore[union-attr]

    result = Agent().answer("warranty?")
    client.flush()
    trace = service.trace(result["trace"], 3)
    spans = by_name(trace)
    root = spans["test_decorated_functions_nest_record_arguments_and_results.<locals>.Agent.answer"]
    assert trace["name"] == root["name"] and "parentSpanId" not in root
    assert root["kind"] == "agent" and root["status"] == "ok"
    assert root["input"]["raw"] == {"question": "warranty?"}
    assert root["output"]["raw"]["answer"] == "It is covered."
    search_span = spans["test_decorated_functions_nest_record_arguments_and_results.<locals>.search"]
    assert search_span["parentSpanId"] == root["spanId"] and search_span["kind"] == "retrieval"
    assert search_span["input"]["raw"] == {"query": "warranty?", "limit": 2}
    assert search_span["output"]["raw"] == ["warranty? 0", "warranty? 1"]
    chat = spans["chat"]
    assert chat["parentSpanId"] == root["spanId"]
    assert (chat["model"], chat["inputTokens"], chat["outputTokens"], chat["totalTokens"], chat["ttftMs"]) == ("gpt-4o", 812, 64, 876, 120)
    assert recorded.errors == []


def test_an_exception_ends_the_span_with_error_and_goes_on(make_client: MakeClient, service: Service) -> None:
    client, _ = make_client()
    seen: list[str] = []

    @client.observe(kind="tool", capture_input=False)
    def calculator(expression: str) -> int:
        seen.append(client.current_span().trace_id)  # type: ignore[union-attr]
        raise ValueError(f"cannot evaluate {expression}")

    with pytest.raises(ValueError, match="cannot evaluate 6 \\* 7"):
        calculator("6 * 7")
    client.flush()
    span = service.trace(seen[0], 1)["spans"][0]
    assert (span["status"], span["statusMessage"]) == ("error", "cannot evaluate 6 * 7")
    assert "input" not in span
    assert client.current_span() is None


def test_a_status_set_inside_is_kept(make_client: MakeClient, service: Service) -> None:
    client, _ = make_client()
    with client.span("guard", kind="guardrail") as span:
        span.set_status("error", "blocked by policy")
    client.flush()
    stored = service.trace(span.trace_id, 1)["spans"][0]
    assert (stored["status"], stored["statusMessage"]) == ("error", "blocked by policy")


def test_async_functions_keep_the_active_span_across_awaits_and_tasks(make_client: MakeClient, service: Service) -> None:
    client, _ = make_client()

    @client.observe(kind="tool")
    async def fetch(i: int) -> int:
        await asyncio.sleep(0.01 * (3 - i))
        with client.span(f"inner {i}"):
            await asyncio.sleep(0)
        return i * 2

    @client.observe(kind="agent")
    async def agent() -> tuple[str, list[int]]:
        results = await asyncio.gather(*(fetch(i) for i in range(3)))
        async with client.span("after", kind="chain"):
            await asyncio.sleep(0)
        return client.current_span().trace_id, list(results)  # type: ignore[union-attr]

    trace_id, results = asyncio.run(agent())
    assert results == [0, 2, 4]
    client.flush()
    trace = service.trace(trace_id, 8)
    spans = trace["spans"]
    root = next(s for s in spans if s["kind"] == "agent")
    fetches = [s for s in spans if s["kind"] == "tool"]
    assert len(fetches) == 3 and all(s["parentSpanId"] == root["spanId"] for s in fetches)
    for i in range(3):
        inner = next(s for s in spans if s["name"] == f"inner {i}")
        parent = next(s for s in fetches if s["spanId"] == inner["parentSpanId"])
        assert parent["input"]["raw"] == {"i": i} and parent["output"]["raw"] == i * 2
    assert next(s for s in spans if s["name"] == "after")["parentSpanId"] == root["spanId"]


def test_generators_are_one_span_from_call_to_exhaustion(make_client: MakeClient, service: Service) -> None:
    client, _ = make_client()

    @client.observe(kind="llm.chat")
    def stream(words: int) -> Iterator[str]:
        for i in range(words):
            with client.span(f"token {i}"):
                pass
            yield f"w{i}"

    with client.span("consumer", kind="chain") as consumer:
        got = list(stream(3))
        # Between steps the consumer's own span is active, not the generator's.
        assert client.current_span() is consumer
    assert got == ["w0", "w1", "w2"]

    @client.observe(kind="llm.chat")
    def endless() -> Iterator[int]:
        i = 0
        while True:
            yield i
            i += 1

    with client.span("early stop", parent=loupe.NEW_TRACE) as second:
        for value in endless():
            if value == 2:
                break
    client.flush()
    spans = by_name(service.trace(consumer.trace_id, 5))
    gen = spans["test_generators_are_one_span_from_call_to_exhaustion.<locals>.stream"]
    assert gen["parentSpanId"] == spans["consumer"]["spanId"]
    assert gen["output"]["raw"] == ["w0", "w1", "w2"] and gen["status"] == "ok"
    assert all(spans[f"token {i}"]["parentSpanId"] == gen["spanId"] for i in range(3))
    stopped = by_name(service.trace(second.trace_id, 2))["test_generators_are_one_span_from_call_to_exhaustion.<locals>.endless"]
    assert stopped["output"]["raw"] == [0, 1, 2] and stopped["status"] == "ok"


def test_async_generators_and_their_errors(make_client: MakeClient, service: Service) -> None:
    client, _ = make_client()

    @client.observe(name="astream", kind="llm.chat")
    async def astream(fail_at: int) -> AsyncIterator[str]:
        for i in range(3):
            if i == fail_at:
                raise RuntimeError("stream broke")
            async with client.span(f"chunk {i}"):
                await asyncio.sleep(0)
            yield str(i)

    async def main() -> tuple[str, list[str], str]:
        async with client.span("reader", kind="chain") as reader:
            items = [item async for item in astream(99)]
            with pytest.raises(RuntimeError):
                async for _ in astream(1):
                    pass
            return reader.trace_id, items, client.current_span().span_id  # type: ignore[union-attr]

    trace_id, items, reader_id = asyncio.run(main())
    assert items == ["0", "1", "2"]
    client.flush()
    spans = service.trace(trace_id, 7)["spans"]
    streams = [s for s in spans if s["name"] == "astream"]
    ok = next(s for s in streams if s["status"] == "ok")
    failed = next(s for s in streams if s["status"] == "error")
    assert ok["output"]["raw"] == ["0", "1", "2"] and ok["parentSpanId"] == reader_id
    assert failed["statusMessage"] == "stream broke"
    assert {s["parentSpanId"] for s in spans if s["name"].startswith("chunk")} == {ok["spanId"], failed["spanId"]}


def test_threads_started_with_a_copied_context_keep_the_parent(make_client: MakeClient, service: Service) -> None:
    client, _ = make_client()
    with client.span("main", kind="workflow") as main:
        context = copy_context()
        worker = threading.Thread(target=lambda: context.run(lambda: client.start_span("in thread").end()))
        worker.start()
        worker.join()
    client.flush()
    spans = by_name(service.trace(main.trace_id, 2))
    assert spans["in thread"]["parentSpanId"] == spans["main"]["spanId"]


def test_session_user_and_tags_reach_the_trace(make_client: MakeClient, service: Service) -> None:
    client, _ = make_client()

    @client.observe(kind="agent")
    def handle(request_user: str) -> str:
        # Known only inside: given to the trace already open.
        with client.trace_attributes(user_id=request_user), client.span("lookup", kind="tool"):
            pass
        return client.current_span().trace_id  # type: ignore[union-attr]

    with client.trace_attributes(session_id="chat-42", tags=["beta"]):
        trace_id = handle("ada@example.com")
    client.flush()
    stored = service.trace(trace_id, 2)
    assert (stored["sessionId"], stored["userId"], stored["tags"]) == ("chat-42", "ada@example.com", ["beta"])
    status, session = service.call("GET", "/api/sessions/chat-42")
    assert status == 200 and any(t["traceId"] == trace_id for t in session["data"]["traces"]), session


def test_kinds_are_the_contracts() -> None:
    client = loupe.Loupe(env={})
    with pytest.raises(loupe.LoupeError, match="kind must be one of"):
        client.start_span("x", kind="llm")  # type: ignore[arg-type]
    for kind in loupe.SPAN_KINDS:
        client.start_span(kind, kind=kind).end()


def test_inputs_json_cannot_hold_are_made_safe(make_client: MakeClient, service: Service) -> None:
    client, recorded = make_client()
    cyclic: dict[str, Any] = {"name": "loop"}
    cyclic["self"] = cyclic
    with client.span("odd input", input={"raw": {"cyclic": cyclic, "nan": float("nan"), "bytes": b"xyz", "set": {1}}}) as span:
        pass
    client.flush()
    stored = service.trace(span.trace_id, 1)["spans"][0]
    assert stored["input"]["raw"] == {
        "cyclic": {"name": "loop", "self": "[Circular]"},
        "nan": "NaN",
        "bytes": "[bytes 3 bytes]",
        "set": [1],
    }
    assert recorded.errors == []
