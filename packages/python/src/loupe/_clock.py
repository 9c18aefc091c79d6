"""
Timestamps from the monotonic clock anchored once to the wall clock, so a span's start, end and
duration agree even if the system clock is stepped while it runs; ISO 8601 with microseconds.
"""

from __future__ import annotations

import os
import random
import time

_WALL_ANCHOR_NS = time.time_ns()
_MONO_ANCHOR_NS = time.perf_counter_ns()


def monotonic_ns() -> int:
    return time.perf_counter_ns()


def iso_at(mono_ns: int) -> str:
    epoch_us = (_WALL_ANCHOR_NS + (mono_ns - _MONO_ANCHOR_NS)) // 1000
    seconds, micros = divmod(epoch_us, 1_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{micros:06d}Z"


def now_iso() -> str:
    return iso_at(monotonic_ns())


# Ids need to be unique, not secret: the process's PRNG (seeded from the OS, reseeded in a forked
# child by the random module itself) is what OpenTelemetry's SDK uses too, at a fraction of the
# cost of os.urandom per span.
_random = random.Random()  # noqa: S311 - ids, not secrets (above)
if hasattr(os, "register_at_fork"):  # not on Windows, which does not fork
    os.register_at_fork(after_in_child=_random.seed)


def _non_zero(bits: int) -> int:
    # An all-zero id is invalid in W3C trace context; draw again in that (unlikely) case.
    while True:
        value = _random.getrandbits(bits)
        if value:
            return value


def new_trace_id() -> str:
    """32 lowercase hex characters."""
    return f"{_non_zero(128):032x}"


def new_span_id() -> str:
    """16 lowercase hex characters."""
    return f"{_non_zero(64):016x}"
