"""
Buffers ended spans and sends them to POST /api/traces, grouped by trace, and scores to POST
/api/scores, on a background thread: when ``batch_size`` spans wait, every ``flush_interval_ms``, on ``flush()``, and at
interpreter exit. A failed request (no answer, 408, 429, 5xx) is retried ``max_retries`` times
with doubling delays. Nothing here raises into the application: failures go to ``on_error``.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ._errors import LoupeError, LoupeErrorKind
from ._http import http_error, retry_after_ms
from ._options import Options
from ._sender import Sender
from ._span import Span

_PATH = "/api/traces"
_SCORES_PATH = "/api/scores"
#: The most one request to POST /api/scores carries when scores back up: the service's bound (1,000),
#: within 4 MiB of JSON, as the TypeScript client's transport does (MAX_REQUEST_SCORES, MAX_REQUEST_BYTES).
MAX_REQUEST_SCORES = 1000
MAX_REQUEST_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class ScoreStats:
    #: Scores waiting to be sent.
    queued: int
    #: Scores the service accepted.
    sent: int
    #: Scores the service refused as invalid.
    rejected: int
    #: Scores lost: queue overflow or retries spent.
    dropped: int


@dataclass(frozen=True)
class TransportStats:
    #: Spans waiting to be sent.
    queued: int
    #: Spans the service accepted.
    sent: int
    #: Spans in traces the service refused as invalid.
    rejected: int
    #: Spans lost: queue overflow or retries spent.
    dropped: int
    #: HTTP requests made, retries included (spans' and scores').
    requests: int
    #: Scores (``Loupe.score``, ``Span.score``): waiting, accepted, refused, lost.
    scores: ScoreStats


#: One ended span: its trace's fields at the time it ended, and its snapshot.
_Queued = tuple[tuple[Any, ...], Span]


class SpanTransport:
    def __init__(self, options: Options) -> None:
        self._options = options
        #: Used by the background thread alone.
        self._sender = Sender(options)
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._queue: deque[_Queued] = deque()
        self._scores: deque[dict[str, Any]] = deque()
        self._sending = 0
        self._flush_wanted = False
        self._closed = False
        self._thread: threading.Thread | None = None
        self._pid = os.getpid()
        self._dropped_unreported = 0
        self._sent = 0
        self._rejected = 0
        self._dropped = 0
        self._requests = 0
        self._scores_dropped_unreported = 0
        #: sent, rejected, dropped
        self._score_counts = [0, 0, 0]

    def stats(self) -> TransportStats:
        with self._lock:
            scores = ScoreStats(len(self._scores), *self._score_counts)
            return TransportStats(len(self._queue), self._sent, self._rejected, self._dropped, self._requests, scores)

    def add_score(self, score: dict[str, Any]) -> None:
        """Queues a score (its payload, made by the caller's thread)."""
        if not self._options.enabled:
            return
        with self._lock:
            if self._closed:
                self._score_counts[2] += 1
                self._report(LoupeError("dropped", "1 score(s) dropped: the client was shut down", {"score_count": 1}))
                return
            self._scores.append(score)
            over = len(self._scores) - self._options.max_queue_size
            if over > 0:
                for _ in range(over):
                    self._scores.popleft()
                self._score_counts[2] += over
                self._scores_dropped_unreported += over
            self._ensure_worker()
            if len(self._scores) >= self._options.batch_size:
                self._changed.notify_all()

    def add(self, span: Span) -> None:
        if not self._options.enabled:
            return
        trace = span.trace
        # Snapshot now: the application may keep touching the objects after end().
        item: _Queued = ((trace.trace_id, trace.name, trace.session_id, trace.user_id, trace.tags), span.snapshot())
        with self._lock:
            if self._closed:
                self._dropped += 1
                self._report(LoupeError("dropped", "1 span(s) dropped: the client was shut down", {"span_count": 1}))
                return
            self._queue.append(item)
            over = len(self._queue) - self._options.max_queue_size
            if over > 0:
                for _ in range(over):
                    self._queue.popleft()
                self._dropped += over
                self._dropped_unreported += over
            self._ensure_worker()
            if len(self._queue) >= self._options.batch_size:
                self._changed.notify_all()

    def flush(self, timeout: float | None = None) -> bool:
        """Sends everything queued and waits for it (sent, rejected or given up); False on timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            if not self._queue and not self._scores and self._sending == 0:
                return True
            self._ensure_worker()
            self._flush_wanted = True
            self._changed.notify_all()
            while self._queue or self._scores or self._sending:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                self._changed.wait(remaining)
            return True

    def shutdown(self, timeout: float | None = None) -> None:
        """Sends all that remains, then stops the thread; spans ended later are dropped (reported)."""
        with self._lock:
            if self._closed:
                return
        self.flush(timeout)
        with self._lock:
            self._closed = True
            self._changed.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def _ensure_worker(self) -> None:
        """Starts the thread on first use, and again in a forked child (threads do not survive fork)."""
        if self._pid != os.getpid():
            self._pid = os.getpid()
            self._thread = None
            self._sending = 0
            # The parent's connection is the parent's.
            self._sender = Sender(self._options)
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._run, name="loupe-transport", daemon=True)
            self._thread.start()
            _register_exit_flush(self)

    def _run(self) -> None:
        interval = self._options.flush_interval_ms / 1000
        next_flush = time.monotonic() + interval
        while True:
            with self._lock:
                while not (
                    self._closed
                    or self._flush_wanted
                    or len(self._queue) >= self._options.batch_size
                    or len(self._scores) >= self._options.batch_size
                    or ((self._queue or self._scores) and time.monotonic() >= next_flush)
                ):
                    wait = next_flush - time.monotonic()
                    if wait <= 0:  # the timer came round with nothing queued
                        next_flush = time.monotonic() + interval
                        wait = interval
                    self._changed.wait(wait)
                if not self._queue and not self._scores:
                    self._flush_wanted = False
                    self._changed.notify_all()
                    if self._closed:
                        self._sender.reset()
                        return
                    continue
                # Spans first: a score may come before its trace, but its trace should not wait.
                batch = [self._queue.popleft() for _ in range(min(self._options.batch_size, len(self._queue)))]
                scores = [] if batch else self._take_scores()
                self._sending += 1
                dropped_unreported, self._dropped_unreported = self._dropped_unreported, 0
                scores_dropped, self._scores_dropped_unreported = self._scores_dropped_unreported, 0
            try:
                if dropped_unreported:
                    self._report(
                        LoupeError(
                            "dropped",
                            f"{dropped_unreported} span(s) dropped: the queue held more than {self._options.max_queue_size}",
                            {"span_count": dropped_unreported},
                        )
                    )
                if scores_dropped:
                    self._report(
                        LoupeError(
                            "dropped",
                            f"{scores_dropped} score(s) dropped: the queue held more than {self._options.max_queue_size}",
                            {"score_count": scores_dropped},
                        )
                    )
                if batch:
                    self._send(batch)
                else:
                    self._send_scores(scores)
            except Exception as error:  # noqa: BLE001 - the thread must outlive any surprise
                noun, count = ("span", len(batch)) if batch else ("score", len(scores))
                self._report(LoupeError("dropped", f"{count} {noun}(s) dropped: {error}", {f"{noun}_count": count}))
            finally:
                with self._lock:
                    self._sending -= 1
                    if not self._queue and not self._scores:
                        self._flush_wanted = False
                        next_flush = time.monotonic() + interval
                    self._changed.notify_all()

    def _take_scores(self) -> list[dict[str, Any]]:
        """The next request's scores (under the lock): all that wait, up to MAX_REQUEST_SCORES and
        MAX_REQUEST_BYTES of JSON (the first always goes)."""
        taken: list[dict[str, Any]] = []
        size = len('{"scores":[]}')
        while self._scores and len(taken) < MAX_REQUEST_SCORES:
            n = len(json.dumps(self._scores[0], separators=(",", ":"), ensure_ascii=False).encode()) + 1
            if taken and size + n > MAX_REQUEST_BYTES:
                break
            size += n
            taken.append(self._scores.popleft())
        return taken

    def _send(self, batch: list[_Queued]) -> None:
        traces = _group_by_trace(batch, self._options)
        self._post(
            _PATH,
            {"traces": traces},
            len(batch),
            "span",
            lambda data: self._accepted(traces, data),
            self._count_spans,
        )

    def _send_scores(self, scores: list[dict[str, Any]]) -> None:
        self._post(
            _SCORES_PATH,
            {"scores": scores},
            len(scores),
            "score",
            lambda data: self._scores_accepted(scores, data),
            self._count_scores,
        )

    def _count_spans(self, outcome: str, n: int) -> None:
        with self._lock:
            if outcome == "rejected":
                self._rejected += n
            else:
                self._dropped += n

    def _count_scores(self, outcome: str, n: int) -> None:
        with self._lock:
            self._score_counts[1 if outcome == "rejected" else 2] += n

    def _post(
        self,
        path: str,
        body: dict[str, Any],
        count: int,
        noun: str,
        accepted: Callable[[dict[str, Any] | None], None],
        counted: Callable[[str, int], None],
    ) -> None:
        """One request with its retries: doubling delays, Retry-After, given up after max_retries."""
        opts = self._options
        count_detail = {f"{noun}_count": count}
        attempt = 0
        while True:
            delay_ms = min(opts.retry_base_delay_ms * 2**attempt, opts.max_retry_delay_ms)
            told_to_wait: float | None = None
            with self._lock:
                self._requests += 1
            try:
                answer = self._sender.post(path, body)
                if 200 <= answer.status < 300:
                    data = answer.body.get("data") if isinstance(answer.body, dict) else None
                    accepted(data if isinstance(data, dict) else None)
                    return
                failure = http_error("POST", path, answer, count if noun == "span" else None)
                if not _retriable(answer.status):
                    # A validation failure (or a bad key) would fail again the same way.
                    counted("rejected", count)
                    kind: LoupeErrorKind = "rejected" if answer.status == 400 else "http"
                    details = {**failure.details, **count_detail}
                    self._report(LoupeError(kind, f"{count} {noun}(s) not sent: {failure.message}", details))
                    return
                if answer.status == 429:
                    told_to_wait = retry_after_ms(answer.headers)
            except LoupeError as error:
                failure = error
            # A Retry-After beyond max_retry_delay_ms (a daily limit) would hold shutdown that long: give up now.
            too_long = told_to_wait is not None and told_to_wait > opts.max_retry_delay_ms
            if told_to_wait is not None:
                delay_ms = told_to_wait
            if attempt >= opts.max_retries or too_long:
                counted("dropped", count)
                why = f"told to wait {int(-(-delay_ms // 1000))} s" if too_long else f"after {attempt + 1} attempts"
                details = {**failure.details, **count_detail}
                self._report(LoupeError("dropped", f"{count} {noun}(s) dropped {why}: {failure.message}", details))
                return
            time.sleep(delay_ms / 1000)
            attempt += 1

    def _scores_accepted(self, scores: list[dict[str, Any]], result: dict[str, Any] | None) -> None:
        errors = result.get("errors") if result else None
        errors = [e for e in errors if isinstance(e, dict)] if isinstance(errors, list) else []
        with self._lock:
            self._score_counts[0] += len(scores) - len(errors)
            self._score_counts[1] += len(errors)
        if errors:
            first = errors[0]
            self._report(
                LoupeError(
                    "rejected",
                    f"{len(errors)} score(s) refused as invalid, e.g. {first.get('path')}: {first.get('message')}",
                    {"score_errors": errors, "score_count": len(errors)},
                )
            )

    def _accepted(self, traces: list[dict[str, Any]], result: dict[str, Any] | None) -> None:
        errors = result.get("errors") if result else None
        errors = errors if isinstance(errors, list) else []
        refused = {e.get("index") for e in errors if isinstance(e, dict)}
        sent = rejected = 0
        for index, trace in enumerate(traces):
            if index in refused:
                rejected += len(trace["spans"])
            else:
                sent += len(trace["spans"])
        with self._lock:
            self._sent += sent
            self._rejected += rejected
        if errors:
            first = errors[0] if isinstance(errors[0], dict) else {}
            self._report(
                LoupeError(
                    "rejected",
                    f"{len(refused)} trace(s) refused as invalid, e.g. "
                    f"{first.get('traceId') or ''} {first.get('path')}: {first.get('message')}",
                    {"errors": errors, "span_count": rejected},
                )
            )

    def _report(self, error: LoupeError) -> None:
        # The application's hook failing stays out of its way.
        with contextlib.suppress(Exception):
            self._options.on_error(error)


def _retriable(status: int) -> bool:
    return status in (408, 429) or status >= 500


def _group_by_trace(batch: list[_Queued], options: Options) -> list[dict[str, Any]]:
    traces: dict[str, dict[str, Any]] = {}
    for (trace_id, name, session_id, user_id, tags), span in batch:
        payload = traces.get(trace_id)
        if payload is None:
            payload = {"traceId": trace_id}
            if name:
                payload["name"] = name
            if session_id:
                payload["sessionId"] = session_id
            if user_id:
                payload["userId"] = user_id
            if tags:
                payload["tags"] = list(tags)
            payload["source"] = options.source
            if options.environment:
                payload["environment"] = options.environment
            payload["spans"] = []
            traces[trace_id] = payload
        payload["spans"].append(span.to_payload())
    return list(traces.values())


def _register_exit_flush(transport: SpanTransport) -> None:
    """At interpreter exit, send what is left (a weak reference: the hook keeps no client alive)."""
    ref = weakref.ref(transport)

    def flush_at_exit() -> None:
        alive = ref()
        if alive is not None:
            alive.shutdown()

    atexit.register(flush_at_exit)
