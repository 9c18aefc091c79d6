"""
What the client shares with the Loupe service: the span kinds and the prompt template grammar.

The same rules as the service's renderer (``packages/sdk/src/contract`` in the Loupe repository);
the cases in ``packages/sdk/src/contract/vectors.json`` are run against both.

- ``{name}`` is a placeholder when ``name`` is an identifier (``[A-Za-z_][A-Za-z0-9_]*``, at most
  256 characters).
- ``{{`` and ``}}`` stand for literal braces.
- Any other brace is kept as text: a render never fails on prose.
- A string value is inserted as it is; any other value as its JSON, written as JavaScript's
  ``JSON.stringify`` writes it (``36``, ``0.5``, ``false``, ``{"a":1}``, ``1e-7``), so a template
  reads the same here and on the service.
- A placeholder without a value (no key of that name) is left as written and reported in
  ``missing``. Values are not rendered again.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from ._json_safe import to_json_safe

SpanKind = Literal[
    "llm.chat",
    "llm.completion",
    "llm.embedding",
    "chain",
    "agent",
    "graph",
    "node",
    "edge",
    "workflow",
    "middleware",
    "tool",
    "retrieval",
    "rerank",
    "guardrail",
    "custom",
]

SPAN_KINDS: tuple[SpanKind, ...] = get_args(SpanKind)

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_MAX_NAME = 256
_NUMBER = re.compile(r"(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?")


@dataclass(frozen=True)
class RenderedTemplate:
    text: str
    #: Placeholder names in order of first appearance, each once.
    placeholders: list[str]
    #: Placeholders left as written because no value was given for them, each once.
    missing: list[str]


def js_number_text(value: float) -> str:
    """A float as JavaScript writes a number (ECMAScript Number::toString); NaN and infinities as JSON's null."""
    if not math.isfinite(value):
        return "null"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    # repr gives the shortest digits that read back as the same double, as JavaScript does.
    match = _NUMBER.fullmatch(repr(abs(value)))
    if match is None:  # pragma: no cover - repr of a finite float always matches
        return repr(value)
    whole, fraction, exponent = match.group(1), match.group(2) or "", match.group(3)
    digits = whole + fraction
    point = len(whole) + (int(exponent) if exponent else 0)
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    digits = stripped.rstrip("0")
    k, n = len(digits), point
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{sign}{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"


def _json_text(value: Any) -> str:
    """Compact JSON of a JSON-safe value, numbers written as JavaScript writes them."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return js_number_text(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ",".join(_json_text(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(json.dumps(str(k), ensure_ascii=False) + ":" + _json_text(v) for k, v in value.items()) + "}"
    return json.dumps(str(value), ensure_ascii=False)


def template_text(value: Any) -> str:
    """How a value reads in rendered text: a string as it is, anything else as its JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, float):
        return js_number_text(value)
    if isinstance(value, (bool, int)) or value is None:
        return _json_text(value)
    return _json_text(to_json_safe(value))


def render_template(template: str, variables: Mapping[str, Any] | None = None) -> RenderedTemplate:
    """Fills ``{name}`` placeholders; one without a value stays as written and is listed in ``missing``."""
    values: Mapping[str, Any] = variables if variables is not None else {}
    out: list[str] = []
    placeholders: list[str] = []
    missing: list[str] = []
    length = len(template)
    i = 0
    while i < length:
        ch = template[i]
        nxt = template[i + 1] if i + 1 < length else ""
        if (ch == "{" and nxt == "{") or (ch == "}" and nxt == "}"):
            out.append(ch)
            i += 2
            continue
        if ch == "{":
            match = _IDENTIFIER.match(template, i + 1, min(length, i + 1 + _MAX_NAME))
            if match is not None:
                name = match.group(0)
                end = i + 1 + len(name)
                if end < length and template[end] == "}":
                    if name not in placeholders:
                        placeholders.append(name)
                    if name in values:
                        out.append(template_text(values[name]))
                    else:
                        if name not in missing:
                            missing.append(name)
                        out.append("{" + name + "}")
                    i = end + 1
                    continue
        out.append(ch)
        i += 1
    return RenderedTemplate(text="".join(out), placeholders=placeholders, missing=missing)


def template_variables(template: str) -> list[str]:
    """The names of a template's placeholders, in order of first use."""
    return render_template(template, {}).placeholders
