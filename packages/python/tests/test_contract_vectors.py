"""The shared contract vectors (packages/sdk/src/contract/vectors.json), the same file the TypeScript side runs."""

from __future__ import annotations

import json
from typing import Any

import pytest

import loupe
from conftest import VECTORS, Service

# JSON numbers are doubles on both sides (JavaScript's JSON.parse reads 123456789012345678 as
# 123456789012345680), so the vectors are read the same way here.
vectors: dict[str, Any] = json.loads(VECTORS.read_text(encoding="utf-8"), parse_int=float)


def test_span_kinds_are_the_contracts() -> None:
    assert list(loupe.SPAN_KINDS) == vectors["spanKinds"]


@pytest.mark.parametrize("case", vectors["templates"], ids=[c["name"] for c in vectors["templates"]])
def test_template(case: dict[str, Any]) -> None:
    rendered = loupe.render_template(case["template"], case["variables"])
    assert (rendered.text, rendered.placeholders, rendered.missing) == (case["text"], case["placeholders"], case["missing"])
    assert loupe.template_variables(case["template"]) == case["placeholders"]


@pytest.mark.parametrize("case", vectors["prompts"], ids=[c["name"] for c in vectors["prompts"]])
def test_prompt_render(case: dict[str, Any]) -> None:
    prompt = {"systemPrompt": case["systemPrompt"], "humanPrompt": case["humanPrompt"]}
    if case["missing"]:
        with pytest.raises(loupe.LoupeError) as raised:
            loupe.render(prompt, case["variables"])
        assert raised.value.kind == "prompt"
        assert raised.value.details["missing"] == case["missing"]
        return
    rendered = loupe.render(prompt, case["variables"])
    assert (rendered.system_prompt, rendered.human_prompt) == (case["systemText"], case["humanText"])
    expected = [{"role": "system", "content": case["systemText"]}]
    if case["humanText"]:
        expected.append({"role": "user", "content": case["humanText"]})
    assert rendered.messages == expected


def test_the_service_renders_the_vectors_as_the_sdk_does(service: Service) -> None:
    """The service's render endpoint and this SDK give the same text for every prompt vector."""
    for index, case in enumerate(vectors["prompts"]):
        status, created = service.call(
            "POST",
            "/api/prompt",
            {"name": f"vector-{index}", "systemPrompt": case["systemPrompt"], "humanPrompt": case["humanPrompt"]},
        )
        assert status == 201, created
        status, answer = service.call("POST", f"/api/prompt/{created['data']['id']}/render", {"variables": case["variables"]})
        assert status == 200, answer
        served = answer["data"]
        assert (served["systemPrompt"], served["humanPrompt"], served["missing"]) == (
            case["systemText"],
            case["humanText"],
            case["missing"],
        )
        mine = [loupe.render_template(case["systemPrompt"], case["variables"]).text]
        if case["humanPrompt"] is not None:
            mine.append(loupe.render_template(case["humanPrompt"], case["variables"]).text)
        assert mine == [served["systemPrompt"], *([served["humanPrompt"]] if served["humanPrompt"] is not None else [])]


def test_values_python_has_and_json_has_not() -> None:
    """Tuples read as arrays, ints of any size as written, other objects as their text."""
    rendered = loupe.render_template("{t} {big} {d}", {"t": (1, "a"), "big": 2**70, "d": {1: 0.5}})
    assert rendered.text == '[1,"a"] 1180591620717411303424 {"1":0.5}'
