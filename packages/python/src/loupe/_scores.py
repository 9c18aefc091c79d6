"""A score as POST /api/scores takes it: made (and its id fixed) when the application scores."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any, Literal

from ._clock import now_iso
from ._json_safe import to_json_safe

ScoreDataType = Literal["numeric", "categorical", "boolean"]


def score_payload(
    *,
    name: str,
    value: float | str | bool,
    trace_id: str | None = None,
    span_id: str | None = None,
    session_id: str | None = None,
    id: str | None = None,  # noqa: A002 - the score field's name
    data_type: ScoreDataType | None = None,
    comment: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    timestamp: datetime | str | None = None,
    environment: str | None = None,
    eval_trace_id: str | None = None,
    source: str = "sdk",
) -> dict[str, Any]:
    """
    The score's wire shape, source ``sdk`` (``eval`` for an experiment's evaluators). The id is
    fixed here (a new UUID unless given), so a
    retried request corrects the score it already stored instead of adding a second one.
    """
    if isinstance(timestamp, datetime):
        at = timestamp if timestamp.tzinfo is not None else timestamp.replace(tzinfo=timezone.utc)
        stamp = at.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")
    else:
        stamp = timestamp or now_iso()
    payload: dict[str, Any] = {"id": id or str(uuid.uuid4()), "name": name, "value": value}
    if data_type is not None:
        payload["dataType"] = data_type
    if comment is not None:
        payload["comment"] = comment
    if metadata:
        payload["metadata"] = to_json_safe(dict(metadata))
    payload["source"] = source
    if environment:
        payload["environment"] = environment
    payload["timestamp"] = stamp
    if trace_id is not None:
        payload["traceId"] = trace_id
    if span_id is not None:
        payload["spanId"] = span_id
    if session_id is not None:
        payload["sessionId"] = session_id
    if eval_trace_id is not None:
        payload["evalTraceId"] = eval_trace_id
    return payload
