"""Turns whatever the application passed into values JSON can always write.

A span's input or output is any object; one cycle or one unknown type must not lose a batch.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import enum
import math
from collections.abc import Mapping
from typing import Any

_MAX_DEPTH = 20
_PLAIN = frozenset({str, int, bool, type(None)})


def to_json_safe(value: Any, max_depth: int = _MAX_DEPTH) -> Any:
    seen: set[int] = set()

    def walk(v: Any, depth: int) -> Any:
        # Fast paths by exact type for what spans carry most (texts, numbers, dicts, lists): the
        # transport thread walks every payload, and its time is taken from the application's.
        kind = type(v)
        if kind in _PLAIN:
            return v
        if kind is not dict and kind is not list and kind is not tuple:
            leaf = _leaf(v)
            if leaf is not _NOT_LEAF:
                return leaf
            if isinstance(v, enum.Enum):
                return walk(v.value, depth)
        if id(v) in seen:
            return "[Circular]"
        if depth >= max_depth:
            return "[MaxDepth]"
        seen.add(id(v))
        try:
            if kind is dict or isinstance(v, Mapping):
                return {key if isinstance(key, str) else str(key): walk(item, depth + 1) for key, item in v.items()}
            if isinstance(v, (list, tuple, set, frozenset)):
                return [walk(item, depth + 1) for item in v]
            if dataclasses.is_dataclass(v) and not isinstance(v, type):
                return {f.name: walk(getattr(v, f.name), depth + 1) for f in dataclasses.fields(v)}
            dump = getattr(v, "model_dump", None)  # pydantic models
            if callable(dump):
                with contextlib.suppress(Exception):  # a failing hook falls back to the text
                    return walk(dump(), depth)
            return str(v)
        finally:
            seen.discard(id(v))

    return walk(value, 0)


_NOT_LEAF = object()


def _leaf(v: Any) -> Any:
    """A value that holds no others, as JSON can write it; ``_NOT_LEAF`` for the others (and enums)."""
    if v is None or isinstance(v, (str, bool, int)):
        return v
    if isinstance(v, float):
        if math.isfinite(v):
            return v
        return "NaN" if v != v else ("Infinity" if v > 0 else "-Infinity")
    if isinstance(v, (datetime.datetime, datetime.date, datetime.time)):
        return v.isoformat()
    if isinstance(v, enum.Enum):
        return _NOT_LEAF
    if isinstance(v, BaseException):
        return {"name": type(v).__name__, "message": str(v)}
    if isinstance(v, (bytes, bytearray, memoryview)):
        return f"[{type(v).__name__} {len(v)} bytes]"
    if callable(v) and not isinstance(v, type) and not isinstance(v, Mapping):
        return f"[Function {getattr(v, '__name__', 'anonymous')}]"
    return _NOT_LEAF
