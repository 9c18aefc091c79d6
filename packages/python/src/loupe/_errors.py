"""The one error type of the client: raised by prompt calls, handed to ``on_error`` otherwise."""

from __future__ import annotations

from typing import Any, Literal

LoupeErrorKind = Literal[
    "config",  # a bad option or variable
    "network",  # no answer: connection refused, timeout
    "http",  # an answer with a failing status
    "rejected",  # the service refused some traces as invalid; they are not re-sent
    "dropped",  # spans lost: queue full, or retries spent
    "prompt",  # a prompt could not be fetched or rendered
]


class LoupeError(Exception):
    """Every error the client reports, with a ``kind`` and ``details`` (status, code, span_count, missing…)."""

    def __init__(self, kind: LoupeErrorKind, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.kind: LoupeErrorKind = kind
        self.message = message
        self.details: dict[str, Any] = dict(details or {})

    def __repr__(self) -> str:
        return f"LoupeError({self.kind!r}, {self.message!r})"
