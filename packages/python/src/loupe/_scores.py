"""A score as POST /api/scores takes it: made (and its id fixed) when the application scores."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Literal, TypedDict, cast

from ._arguments import check_options
from ._clock import now_iso
from ._json_safe import to_json_safe

if TYPE_CHECKING:
    from typing_extensions import Unpack

ScoreDataType = Literal["numeric", "categorical", "boolean"]


class ScoreOptions(TypedDict, total=False):
    """What a score says besides its target, name and value (``Span.score``'s options)."""

    #: Yours for an idempotent upsert: re-sending it corrects the score. Default: a new UUID.
    id: str | None
    #: Default: the score config's type, else from the value (number, label, bool).
    data_type: ScoreDataType | None
    comment: str | None
    metadata: Mapping[str, Any] | None
    #: When the score was given (a datetime or ISO text); default now.
    timestamp: datetime | str | None
    #: Default: the client's environment.
    environment: str | None
    #: The trace of the judge (an evaluator) that gave the score.
    eval_trace_id: str | None


class ScoreTarget(ScoreOptions, total=False):
    trace_id: str | None
    span_id: str | None
    session_id: str | None


class ScoreArgs(ScoreTarget):
    """One score (``Loupe.score``): its target is a trace, a span (trace and span ids) or a session."""

    name: str
    value: float | str | bool


_SCORE_FIELDS = ScoreArgs.__required_keys__ | ScoreArgs.__optional_keys__


def score_payload(*, source: str = "sdk", default_environment: str | None = None, **score: Unpack[ScoreArgs]) -> dict[str, Any]:
    """
    The score's wire shape, source ``sdk`` (``eval`` for an experiment's evaluators). The id is
    fixed here (a new UUID unless given), so a retried request corrects the score it already
    stored instead of adding a second one.
    """
    check_options("score", score, _SCORE_FIELDS, ScoreArgs.__required_keys__)
    timestamp, metadata = score.get("timestamp"), score.get("metadata")
    environment = score.get("environment") or default_environment
    if isinstance(timestamp, datetime):
        at = timestamp if timestamp.tzinfo is not None else timestamp.replace(tzinfo=timezone.utc)
        stamp = at.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")
    else:
        stamp = timestamp or now_iso()
    payload: dict[str, Any] = {"id": score.get("id") or str(uuid.uuid4()), "name": score["name"], "value": score["value"]}
    if (data_type := score.get("data_type")) is not None:
        payload["dataType"] = data_type
    if (comment := score.get("comment")) is not None:
        payload["comment"] = comment
    if metadata:
        payload["metadata"] = to_json_safe(dict(metadata))
    payload["source"] = source
    if environment:
        payload["environment"] = environment
    payload["timestamp"] = stamp
    for field, wire in (("trace_id", "traceId"), ("span_id", "spanId"), ("session_id", "sessionId"), ("eval_trace_id", "evalTraceId")):
        if (given := cast(Mapping[str, Any], score).get(field)) is not None:
            payload[wire] = given
    return payload
