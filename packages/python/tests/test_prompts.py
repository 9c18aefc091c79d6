"""Prompts by name, version and label; the cache, its background refresh, the fallback; prompt links on spans."""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable

import pytest

import loupe
from conftest import Recorded, Service, free_port
from flaky_proxy import flaky_proxy

MakeClient = Callable[..., tuple[loupe.Loupe, Recorded]]


def gets(recorded: Recorded) -> int:
    return sum(1 for r in recorded.requests if r == "GET /api/prompt/resolve")


def publish(service: Service, name: str, system: str, human: str | None = None) -> int:
    status, body = service.call("POST", "/api/prompt", {"name": name, "systemPrompt": system, "humanPrompt": human})
    assert status == 201, body
    prompt_id: int = body["data"]["id"]
    return prompt_id


def new_version(service: Service, prompt_id: int, version: str, system: str) -> int:
    status, body = service.call(
        "POST", f"/api/prompt/{prompt_id}/versions", {"newVersion": version, "changes": {"systemPrompt": system, "isLatest": True}}
    )
    assert status == 201, body
    version_id: int = body["data"]["id"]
    return version_id


def unique(name: str) -> str:
    return f"{name}-{secrets.token_hex(3)}"


def test_latest_version_and_label_rendered(make_client: MakeClient, service: Service) -> None:
    name = unique("support")
    first = publish(service, name, "You are the support agent of {company}.", "Customer asks: {question}")
    new_version(service, first, "1.1.0", "You are the friendly support agent of {company}. Use {{braces}} sparingly.")
    status, _ = service.call("PUT", f"/api/prompt/{first}/labels/production")
    assert status == 200
    client, _ = make_client()

    latest = client.get_prompt(name)
    assert (latest.version, latest.is_latest, latest.is_fallback) == ("1.1.0", True, False)
    assert client.render(latest, {"company": "Acme", "question": "Where is my order?"}).messages == [
        {"role": "system", "content": "You are the friendly support agent of Acme. Use {braces} sparingly."},
        {"role": "user", "content": "Customer asks: Where is my order?"},
    ]
    pinned = client.get_prompt(name, version="1.0.0")
    assert (pinned.id, pinned.version, pinned.is_latest) == (first, "1.0.0", False)
    production = client.prompts.get(name, label="production")
    assert (production.id, production.labels) == (first, ["production"])
    with pytest.raises(loupe.LoupeError) as missing:
        latest.render({"company": "Acme"})
    assert missing.value.details["missing"] == ["question"]
    with pytest.raises(loupe.LoupeError) as not_found:
        client.get_prompt(unique("no-such-prompt"))
    assert (not_found.value.kind, not_found.value.details["code"]) == ("prompt", "NOT_FOUND")
    with pytest.raises(loupe.LoupeError, match="label or a version"):
        client.get_prompt(name, version="1.0.0", label="production")


def test_within_the_ttl_the_cache_answers(make_client: MakeClient, service: Service) -> None:
    name = unique("cached")
    publish(service, name, "v1")
    client, recorded = make_client()
    for _ in range(3):
        assert client.get_prompt(name).system_prompt == "v1"
        assert client.get_prompt(name, version="1.0.0").system_prompt == "v1"
    assert gets(recorded) == 2
    client.invalidate_prompts(name)
    client.get_prompt(name)
    assert gets(recorded) == 3


def test_a_stale_entry_is_answered_at_once_and_refreshed_in_the_background(make_client: MakeClient, service: Service) -> None:
    name = unique("swr")
    first = publish(service, name, "old text")
    client, recorded = make_client()
    assert client.get_prompt(name).system_prompt == "old text"
    new_version(service, first, "2.0.0", "new text")
    assert client.get_prompt(name).system_prompt == "old text"  # fresh within the minute: no request
    assert gets(recorded) == 1
    # Stale for this call (its TTL is 0): the cached copy at once, one refresh in the background.
    assert client.get_prompt(name, cache_ttl_ms=0).system_prompt == "old text"
    deadline = time.monotonic() + 10
    while client.get_prompt(name).system_prompt != "new text":
        assert time.monotonic() < deadline, "the refresh did not land"
        time.sleep(0.05)
    assert gets(recorded) == 2


def test_a_stale_copy_is_kept_while_the_service_fails(make_client: MakeClient, service: Service) -> None:
    name = unique("kept")
    publish(service, name, "kept text")
    with flaky_proxy(service.base_url) as proxy:
        client, recorded = make_client(base_url=proxy.url, prompt_cache_ttl_ms=0)
        assert client.get_prompt(name).system_prompt == "kept text"
        proxy.failures_left = 100
        for _ in range(3):
            assert client.get_prompt(name).system_prompt == "kept text"
            time.sleep(0.1)
    # Each failed refresh is reported; the copy stays.
    assert recorded.errors and all(e.kind == "prompt" for e in recorded.errors)
    assert any(e.details.get("status") == 503 for e in recorded.errors)


def test_the_fallback_when_the_service_cannot_be_reached(make_client: MakeClient) -> None:
    client, recorded = make_client(base_url=f"http://127.0.0.1:{free_port()}")
    text = client.get_prompt("support", fallback="You help {user}.")
    assert (text.is_fallback, text.system_prompt, text.version) == (True, "You help {user}.", "0.0.0")
    assert client.render(text, {"user": "Ada"}).system_prompt == "You help Ada."
    record = client.get_prompt("support", version="1.2.0", fallback={"systemPrompt": "Hi", "humanPrompt": "{q}"})
    assert (record.version, record.human_prompt, record.is_fallback) == ("1.2.0", "{q}", True)
    assert [e.kind for e in recorded.errors] == ["prompt", "prompt"]
    with pytest.raises(loupe.LoupeError) as raised:
        client.get_prompt("support")
    assert raised.value.kind == "prompt" and "got no answer" in raised.value.message


def test_concurrent_callers_share_one_request_and_async_callers_too(make_client: MakeClient, service: Service) -> None:
    name = unique("shared")
    publish(service, name, "shared text")
    client, recorded = make_client()

    async def main() -> list[str]:
        prompts = await asyncio.gather(*(client.aget_prompt(name) for _ in range(8)))
        return [p.system_prompt for p in prompts]

    assert asyncio.run(main()) == ["shared text"] * 8
    assert gets(recorded) == 1


def test_a_span_with_a_prompt_names_its_version_and_a_fallback_its_name_only(make_client: MakeClient, service: Service) -> None:
    name = unique("linked")
    publish(service, name, "Answer {q}")
    client, _ = make_client()
    prompt = client.get_prompt(name)
    with client.span("answer", kind="llm.chat", prompt=prompt) as span, client.span("fallback answer", kind="llm.chat") as other:
        other.set_prompt(client.get_prompt(name, version="9.9.9", fallback="Answer {q}"))
    client.flush()
    spans = {s["name"]: s for s in service.trace(span.trace_id, 2)["spans"]}
    assert (spans["answer"]["promptName"], spans["answer"]["promptVersion"]) == (name, "1.0.0")
    assert spans["fallback answer"]["promptName"] == name and "promptVersion" not in spans["fallback answer"]
    status, metrics = service.call("GET", f"/api/prompt/{prompt.id}/metrics")
    assert status == 200, metrics
